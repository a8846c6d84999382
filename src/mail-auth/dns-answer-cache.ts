import { TtlCache } from './ttl-cache.js';

/**
 * Answers kept at most this long. node:dns does not report the TTL of TXT answers, so every
 * answer is kept for this fixed time: long enough that a burst of mail from one sender
 * (a test suite, a newsletter) looks its records up once, short enough that a fixed DNS
 * record is seen within a minute. Real TTLs of SPF/DKIM/DMARC records are minutes to hours.
 */
export const DNS_CACHE_TTL_MS = 60_000;

/**
 * Answers kept at most. A message needs about 3-12 look-ups (SPF with includes, one key per
 * signature, DMARC with its tree walk); 1 000 covers the distinct senders of a busy minute
 * in well under a megabyte, and the oldest entry goes first past it.
 */
export const DNS_CACHE_MAX_ENTRIES = 1_000;

/** A DNS look-up as mailauth calls it (the dns.promises.resolve signature). */
export type DnsLookup = (name: string, rrtype: string) => Promise<unknown>;

/** Error codes that are answers (RFC 2308 negative caching): the name or the record does not exist. */
const NEGATIVE = new Set(['ENOTFOUND', 'ENODATA']);

/**
 * A small bounded cache in front of a DnsLookup, shared by all messages: it keeps answers
 * and "does not exist" for DNS_CACHE_TTL_MS, and shares one pending look-up between
 * concurrent messages. Failures (timeouts, SERVFAIL) are never kept, so the next message asks again.
 */
export class DnsAnswerCache {
  private readonly answers: TtlCache<Promise<unknown>>;

  constructor(
    private readonly lookup: DnsLookup,
    now: () => number = Date.now,
    ttlMs: number = DNS_CACHE_TTL_MS,
    maxEntries: number = DNS_CACHE_MAX_ENTRIES,
  ) {
    this.answers = new TtlCache(ttlMs, maxEntries, now);
  }

  /** The answer for (name, rrtype), from the cache or the network. */
  resolve(name: string, rrtype: string): Promise<unknown> {
    const key = `${rrtype} ${name.toLowerCase()}`;
    const cached = this.answers.get(key);
    if (cached !== undefined) return cached;
    const answer = this.lookup(name, rrtype);
    answer.catch((error: unknown) => {
      const code = (error as { code?: unknown } | null)?.code;
      if (typeof code !== 'string' || !NEGATIVE.has(code)) this.answers.deleteIf(key, answer);
    });
    this.answers.set(key, answer);
    return answer;
  }

  /** Entries held now (tests, metrics). */
  get size(): number {
    return this.answers.size;
  }
}
