import { deadlineResolver } from '../mail-auth/deadline-resolver.js';
import type { DnsLookup } from '../mail-auth/dns-answer-cache.js';
import { systemDnsLookup } from '../mail-auth/system-dns-lookup.js';

/** What a host name resolved to: its addresses (IPv4 first), no address at all, or no answer. */
export type HostResolution =
  | { kind: 'addresses'; addresses: string[] }
  | { kind: 'not_found' }
  | { kind: 'failed'; reason: string };

/** Resolves a host name's A and AAAA records, answering by `deadlineAt` (epoch ms) at the latest. */
export type ResolveHost = (hostname: string, deadlineAt: number) => Promise<HostResolution>;

/** The answers that say "no such record" (RFC 2308), rather than "no answer". */
const NEGATIVE = new Set(['ENOTFOUND', 'ENODATA']);

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : error instanceof Error ? error.message : String(error);
}

/**
 * A and AAAA at once through `lookup`, both within one deadline: `timeoutMs` from now, or
 * `deadlineAt` when that is sooner. A family that answers "no such record" adds nothing; one
 * that fails (timeout, SERVFAIL) adds nothing either when the other gave addresses, because
 * the sender connects only to addresses it checked, so an address it never saw cannot be
 * reached. A DNS answer is one message of at most 64 KiB, which bounds the list.
 */
export function lookupHostResolver(lookup: DnsLookup, timeoutMs: number, now: () => number = Date.now): ResolveHost {
  return async (hostname, deadlineAt) => {
    const bounded = deadlineResolver(lookup, Math.min(deadlineAt, now() + timeoutMs), now);
    const answers = await Promise.allSettled([bounded(hostname, 'A'), bounded(hostname, 'AAAA')]);
    const addresses = new Set<string>();
    let failure: string | undefined;
    for (const answer of answers) {
      if (answer.status === 'fulfilled') {
        for (const address of answer.value as string[]) addresses.add(address);
      } else if (!NEGATIVE.has(codeOf(answer.reason))) {
        failure ??= codeOf(answer.reason);
      }
    }
    if (addresses.size > 0) return { kind: 'addresses', addresses: [...addresses] };
    return failure === undefined ? { kind: 'not_found' } : { kind: 'failed', reason: failure };
  };
}

/**
 * The resolver the service's sender checks use: DNS_SERVERS when set, else the system's
 * (node:dns's c-ares client, asynchronous, never the thread pool's getaddrinfo), each query
 * bounded by DNS_TIMEOUT_MS.
 */
export function dnsHostResolver(servers: readonly string[] | undefined, timeoutMs: number): ResolveHost {
  return lookupHostResolver(systemDnsLookup(servers, timeoutMs), timeoutMs);
}
