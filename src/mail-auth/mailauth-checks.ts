import { isIP } from 'node:net';
import { arc, dkimVerify, spf, type ARCResult, type DKIMVerifyResult, type DMARCResult, type DNSResolver, type SPFResult } from 'mailauth';
// Not re-exported by mailauth's entry point; typed by its own index.d.ts (mailauth is pinned).
import { evaluateDmarc } from 'mailauth/lib/dmarc/index.js';
import { TtlCache } from './ttl-cache.js';

/**
 * An SPF verdict is kept this long. It is made from DNS answers up to DNS_CACHE_TTL_MS (60 s)
 * old, so a changed SPF record is seen within 90 s at worst; mail from one sender (a test
 * suite, a newsletter) then evaluates its SPF record about twice a minute instead of once
 * a message (~65 µs each for one include: docs/benchmarks.md, "Sender authentication:
 * what it costs").
 */
export const SPF_VERDICT_TTL_MS = 30_000;

/** Verdicts kept at most, the oldest dropped first: one per (client address, HELO, sender) of a busy minute. */
export const SPF_VERDICT_MAX_ENTRIES = 1_000;

/** What the checks are told of the SMTP transaction, and where they look DNS up. */
export interface MailauthCheckOptions {
  ip: string;
  helo: string;
  /** MAIL FROM; '' for the null sender (SPF then checks the HELO name, RFC 7208 §2.4). */
  sender: string;
  /** Our name: the authserv-id, and the host named in SPF's comments. */
  mta: string;
  resolver: DNSResolver;
}

/** The verdicts of mailauth's checks, as its authenticate() returns them (the fields we read). */
export interface MailauthVerdicts {
  dkim: DKIMVerifyResult;
  spf: SPFResult;
  arc: ARCResult;
  dmarc: DMARCResult | false;
}

/**
 * SPF verdicts by (client address, HELO name, envelope sender): a verdict depends on nothing
 * else but DNS answers (RFC 7208 §4.1, check_host()), and the whole sender is in the key
 * because macros may use its local part and the verdict's comment names it. A `temperror`
 * (a DNS answer that did not come) is never kept.
 */
export class SpfVerdictCache {
  private readonly verdicts: TtlCache<SPFResult>;

  constructor(now: () => number = Date.now, ttlMs = SPF_VERDICT_TTL_MS, maxEntries = SPF_VERDICT_MAX_ENTRIES) {
    this.verdicts = new TtlCache(ttlMs, maxEntries, now);
  }

  /** The verdict of `options`, kept or evaluated now (and kept when it is not temperror). */
  async verdict(options: MailauthCheckOptions & { strict: boolean }): Promise<SPFResult> {
    const key = `${options.ip}\n${options.helo}\n${options.sender}\n${options.mta}`;
    const kept = this.verdicts.get(key);
    if (kept !== undefined) return kept;
    const result = await spf(options);
    if (result.status.result !== 'temperror') this.verdicts.set(key, result);
    return result;
  }

  /** Verdicts held now (tests). */
  get size(): number {
    return this.verdicts.size;
  }
}

/** Header fields whose verification reads the body: DKIM signatures and ARC sets (RFC 6376, RFC 8617). */
const BODY_READING_FIELD = /^(?:dkim-signature|arc-)/i;
/** Bytes of a header line that BODY_READING_FIELD and VERDICT_FIELD need to see ("dkim-signature" is 14). */
const FIELD_PREFIX_BYTES = 16;

/**
 * Header fields an unsigned message's verdicts read besides the envelope: From (the author
 * DMARC aligns with) and Return-Path (mailauth's envelope sender for the null sender). Matched
 * on the start of the field's first line, so that a field folded before its colon counts too;
 * a longer name that begins the same only makes the key longer.
 */
const VERDICT_FIELD = /^(?:from|return-path)/i;

/**
 * Longest verdict key part (the VERDICT_FIELD lines) that is cached: typical From and
 * Return-Path fields are under 200 bytes; a longer one is checked afresh each time rather
 * than holding kilobytes per cache entry.
 */
export const MAX_VERDICT_FIELDS_BYTES = 2048;

/** What scanHeader finds in a message. */
export interface HeaderScan {
  /** What the checks need to read (see bytesToCheck). */
  bytes: Buffer;
  /** True when a DKIM signature or an ARC set makes the checks read the body. */
  signed: boolean;
  /**
   * For an unsigned message: its VERDICT_FIELD lines, CRLF-joined (latin1), everything of the
   * message its verdicts depend on; null when there is no such simple answer (a signed
   * message, no blank line after the header, a first line that is a continuation, or fields
   * longer than MAX_VERDICT_FIELDS_BYTES).
   */
  verdictFields: string | null;
}

/**
 * One pass over the header section (the field names only, and the lines of VERDICT_FIELD):
 * what the checks must read, and for an unsigned message the fields its verdicts depend on.
 * Views, never a copy of the message.
 */
export function scanHeader(message: Buffer): HeaderScan {
  const whole = (signed: boolean): HeaderScan => ({ bytes: message, signed, verdictFields: null });
  const fields: string[] = [];
  let fieldBytes = 0;
  let inVerdictField = false;
  let lineStart = 0;
  while (lineStart < message.length) {
    const lineEnd = message.indexOf(0x0a, lineStart);
    if (lineEnd < 0) return whole(false); // No blank line: all of it is header.
    const blank = lineEnd === lineStart || (lineEnd === lineStart + 1 && message[lineStart] === 0x0d);
    if (blank) {
      if (lineStart === 0) return whole(false);
      const verdictFields = fieldBytes <= MAX_VERDICT_FIELDS_BYTES ? fields.join('\r\n') : null;
      return { bytes: message.subarray(0, lineEnd + 1), signed: false, verdictFields };
    }
    const first = message[lineStart];
    const continuation = first === 0x20 || first === 0x09;
    if (continuation && lineStart === 0) return whole(false);
    if (!continuation) {
      // The field name is all that is read of a line (a header line can be megabytes long).
      const prefix = message.toString('latin1', lineStart, Math.min(lineEnd, lineStart + FIELD_PREFIX_BYTES));
      if (BODY_READING_FIELD.test(prefix)) return whole(true);
      inVerdictField = VERDICT_FIELD.test(prefix);
    }
    if (inVerdictField) {
      fieldBytes += lineEnd - lineStart + 1;
      if (fieldBytes <= MAX_VERDICT_FIELDS_BYTES) fields.push(message.toString('latin1', lineStart, lineEnd).replace(/\r$/, ''));
    }
    lineStart = lineEnd + 1;
  }
  return whole(false);
}

/**
 * The part of a message the checks need to read: the whole message when its header carries a
 * DKIM signature or an ARC set (their body hashes), else only the header section up to its
 * blank line. An unsigned message's verdicts do not depend on its body (SPF and DMARC read the
 * envelope and the From field), but mailauth would still stream the body through its
 * canonicaliser: ~35 µs for 4 KB, ~1 ms for 100 KB (docs/benchmarks.md, "Sender
 * authentication: what it costs"). A view, never a copy.
 */
export function bytesToCheck(message: Buffer): Buffer {
  return scanHeader(message).bytes;
}

/**
 * mailauth's authenticate() in strict mode without what we do not use: DKIM, SPF (through the
 * verdict cache), ARC and DMARC, in that order and with the same inputs as authenticate()
 * gives them (mailauth 7.1.0, lib/mailauth.js), but no BIMI, no ARC sealing, no parsed
 * Received chain and no header text (authentication-results-header.ts writes ours from the
 * verdicts). authenticate()'s last step, correcting each signature's `aligned` flag after
 * DMARC, is left out too: neither the API nor our header shows that flag.
 */
export async function runMailauthChecks(message: Buffer | NodeJS.ReadableStream, options: MailauthCheckOptions, spfVerdicts: SpfVerdictCache): Promise<MailauthVerdicts> {
  const strict = true;
  const { resolver, ip, sender } = options;
  const dkim = await dkimVerify(message as Buffer, { resolver, sender, strict });
  // authenticate(): no HELO name means the client address, and an address goes in brackets.
  const plainHelo = options.helo === '' ? ip : options.helo;
  const helo = isIP(plainHelo) === 0 ? plainHelo : `[${plainHelo}]`;
  const spfResult = await spfVerdicts.verdict({ ...options, helo, strict });
  // What authenticate() passes; mailauth's typings name the two shapes differently.
  const arcResult = await arc(dkim.arc as unknown as Parameters<typeof arc>[0], { resolver, strict, ip });
  let dmarc: DMARCResult | false = false;
  // As authenticate(): an empty list too, for which DMARC says why it could not evaluate.
  if (dkim.headerFrom !== undefined) {
    ({ response: dmarc } = await evaluateDmarc({
      headerFrom: dkim.headerFrom,
      fromFields: dkim.fromFields,
      spfDomains: spfResult.status.result === 'pass' && spfResult.domain !== '' ? [spfResult.domain] : [],
      dkimDomains: dkim.results
        .filter((row) => row.status.result === 'pass')
        .map((row) => ({ id: row.id, domain: row.signingDomain ?? '', aligned: row.status.aligned, underSized: row.status.underSized })),
      arcResult,
      resolver,
      strict,
    }));
  }
  return { dkim, spf: spfResult, arc: arcResult, dmarc };
}
