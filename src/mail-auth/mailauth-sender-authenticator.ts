import { Readable } from 'node:stream';
import type { SenderAuth } from '../domain/sender-auth.js';
import type { SenderAuthenticator, SenderAuthInput, SenderAuthOutcome } from '../ports/sender-auth.js';
import { authenticationResultsHeader, formatAuthenticationResults } from './authentication-results-header.js';
import { deadlineResolver } from './deadline-resolver.js';
import { DnsAnswerCache, type DnsLookup } from './dns-answer-cache.js';
import { runMailauthChecks, scanHeader, SPF_VERDICT_MAX_ENTRIES, SPF_VERDICT_TTL_MS, SpfVerdictCache } from './mailauth-checks.js';
import { mapMailauthResult, unverified } from './map-mailauth-result.js';
import { systemDnsLookup } from './system-dns-lookup.js';
import { TtlCache } from './ttl-cache.js';

/**
 * The message goes to mailauth in slices of this size, each hashed in its own turn of the
 * event loop. Given at once, the DKIM body hash of a 10 MiB message held the loop for
 * 180-500 ms here; 64 KiB is a few ms of hashing per turn (docs/api.md, "Sender
 * authentication"), and 160 turns for the largest message cost little on top.
 */
export const AUTH_CHUNK_BYTES = 64 * 1024;

/**
 * Time the checks may take beyond the DNS budget before the message is stored without
 * them (every verdict `temperror`). Once the budget is spent every look-up fails at once,
 * so what remains is hashing (~150 ms for 10 MiB); this only guards against a library bug.
 */
export const AUTH_CPU_GRACE_MS = 2_000;

/** Options of MailauthSenderAuthenticator. */
export interface MailauthSenderAuthenticatorOptions {
  /** authserv-id of the Authentication-Results header: our name, as in the SMTP greeting. */
  serverName: string;
  /** DNS_TIMEOUT_MS: the whole DNS time of one message. */
  dnsTimeoutMs: number;
  /** DNS_SERVERS (`host[:port]`); undefined: the system's resolvers. */
  dnsServers?: readonly string[];
  /** Tests only: another DNS client. */
  lookup?: DnsLookup;
  /** Told when the checks failed as a whole (a library error): the message goes on with `temperror`. */
  onError?: (error: unknown) => void;
}

/**
 * SPF, DKIM, DMARC and ARC with mailauth (by the author of smtp-server and nodemailer), in
 * RFC-strict mode: a body changed after signing is `dkim=fail` (RFC 6376 §6.1.3), not the
 * lenient `neutral`. Look-ups go through a shared bounded cache and a per-message deadline,
 * SPF verdicts through a cache of their own (mailauth-checks.ts); BIMI is not checked (it
 * needs HTTPS fetches and tells nothing about the sender's identity).
 */
export class MailauthSenderAuthenticator implements SenderAuthenticator {
  private readonly cache: DnsAnswerCache;
  private readonly spfVerdicts = new SpfVerdictCache();
  /**
   * Outcomes of unsigned messages by everything their verdicts depend on: the client address,
   * HELO name and envelope sender (SPF's inputs) and the From and Return-Path fields (DMARC's
   * author, mailauth's envelope for the null sender); no body hash, no signature, so the rest
   * of the message changes nothing. Kept as long as an SPF verdict and as many, for the same
   * reason (its verdicts are made of DNS answers up to DNS_CACHE_TTL_MS old): mail from one
   * sender then costs a scan of its header instead of mailauth's header parse, ARC and DMARC
   * evaluation and our header's formatting.
   */
  private readonly unsignedOutcomes = new TtlCache<SenderAuthOutcome>(SPF_VERDICT_TTL_MS, SPF_VERDICT_MAX_ENTRIES);

  constructor(private readonly options: MailauthSenderAuthenticatorOptions) {
    this.cache = new DnsAnswerCache(options.lookup ?? systemDnsLookup(options.dnsServers, options.dnsTimeoutMs));
  }

  async check(input: SenderAuthInput): Promise<SenderAuthOutcome> {
    const { serverName, dnsTimeoutMs } = this.options;
    const ip = plainAddress(input.clientAddress);
    const scan = scanHeader(Buffer.from(input.message.buffer, input.message.byteOffset, input.message.byteLength));
    const key = scan.verdictFields === null ? null : `${ip}\n${input.helo}\n${input.envelopeFrom}\n${scan.verdictFields}`;
    const kept = key === null ? undefined : this.unsignedOutcomes.get(key);
    if (kept !== undefined) return kept;
    const resolver = deadlineResolver((name, rrtype) => this.cache.resolve(name, rrtype), Date.now() + dnsTimeoutMs);
    try {
      const checks = runMailauthChecks(
        asInput(scan.bytes),
        { ip, helo: input.helo, sender: input.envelopeFrom, mta: serverName, resolver: resolver as never },
        this.spfVerdicts,
      );
      const result = await within(checks, dnsTimeoutMs + AUTH_CPU_GRACE_MS);
      const auth = mapMailauthResult(result);
      const header = authenticationResultsHeader(serverName, result, auth);
      const outcome = { auth: frozen(auth), header: Buffer.from(header, 'utf8') };
      // A temperror is a DNS answer that did not come: the next message asks again.
      if (key !== null && !hasTemperror(auth)) this.unsignedOutcomes.set(key, outcome);
      return outcome;
    } catch (error) {
      this.options.onError?.(error);
      const auth = unverified();
      return { auth, header: Buffer.from(formatAuthenticationResults(serverName, auth), 'utf8') };
    }
  }
}

/** True when any verdict is temperror. */
function hasTemperror(auth: SenderAuth): boolean {
  return [auth.spf, auth.dmarc, auth.arc, ...auth.dkim].some((verdict) => verdict.result === 'temperror');
}

/** The verdicts, frozen: one cached outcome is handed to every message of its sender. */
function frozen(auth: SenderAuth): SenderAuth {
  for (const part of [auth.spf, auth.dmarc, auth.arc, ...auth.dkim, auth.dkim]) Object.freeze(part);
  return Object.freeze(auth);
}

/**
 * What mailauth reads: a message of at most AUTH_CHUNK_BYTES (most mail) as one Buffer view,
 * hashed in one turn like one slice would be, without the stream's plumbing (an async
 * generator, a Readable and a setImmediate cost ~100 µs a message here, a third of the
 * checks of a 4 KB message: docs/benchmarks.md, "Sender authentication: what it costs");
 * a larger one as slices.
 */
function asInput(bytes: Buffer): Buffer | Readable {
  return bytes.byteLength <= AUTH_CHUNK_BYTES ? bytes : slices(bytes);
}

/**
 * The message as a stream of AUTH_CHUNK_BYTES views (no copies), with a turn of the event
 * loop between slices: stream plumbing alone runs on process.nextTick, which never lets
 * timers or sockets in, so without setImmediate the whole hash would still be one stall.
 */
function slices(bytes: Buffer): Readable {
  return Readable.from(
    (async function* () {
      for (let offset = 0; offset < bytes.length; offset += AUTH_CHUNK_BYTES) {
        if (offset > 0) await new Promise<void>((resolve) => setImmediate(resolve));
        yield bytes.subarray(offset, offset + AUTH_CHUNK_BYTES);
      }
    })(),
  );
}

/** An IPv4-mapped IPv6 socket address as the IPv4 address SPF records name. */
function plainAddress(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return mapped?.[1] ?? address;
}

/** The promise, or a rejection after `ms`. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`sender checks took over ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
