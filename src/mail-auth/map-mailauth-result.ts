import { isAuthResult, type AuthResult, type DmarcPolicy, type SenderAuth } from '../domain/sender-auth.js';

/**
 * mailauth keywords outside AUTH_RESULTS, mapped to the nearest one. DKIM `policy` (RFC 8601
 * §2.7.1: signed, but the signature was not acceptable, e.g. a key under 1024 bits) does
 * not count for a receiver, as a `fail` does not; the short forms are older spellings.
 */
const NEAREST: Record<string, AuthResult> = { policy: 'fail', temperr: 'temperror', permerr: 'permerror', hardfail: 'fail' };

/** A result keyword as the API shows it; anything unknown is `permerror` (could not be evaluated). */
export function toAuthResult(value: unknown): AuthResult {
  if (isAuthResult(value)) return value;
  return (typeof value === 'string' ? NEAREST[value] : undefined) ?? 'permerror';
}

/**
 * A DKIM verdict. A signature whose key is not in DNS is PERMFAIL in RFC 6376 §6.1.2 ("no
 * key for signature"), which RFC 8601 §2.7.1 calls `permerror` (an unrecoverable error, a
 * later attempt is unlikely to succeed); mailauth says `neutral (no key)`.
 */
export function toDkimResult(row: unknown): AuthResult {
  const result = toAuthResult(at(row, 'status', 'result'));
  return result === 'neutral' && at(row, 'status', 'comment') === 'no key' ? 'permerror' : result;
}

/** A DMARC policy as published, else null. */
function toPolicy(value: unknown): DmarcPolicy {
  return value === 'none' || value === 'quarantine' || value === 'reject' ? value : null;
}

/** Reads a nested property of mailauth's result without trusting its shape. */
export function at(value: unknown, ...path: string[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

const str = (value: unknown): string => (typeof value === 'string' ? value : '');

/**
 * Why the message's From field names no single author whom DMARC could confirm, or undefined
 * when it names one: no From field, several From fields (RFC 5322 §3.6 allows one; a mail
 * program may show either), no address or several addresses in it (even of one domain: the
 * reader sees one sender, and the badge must be about the one they see), or an address without
 * a single domain (mailauth then evaluates no DMARC, RFC 9989 §5.3.1). Read from the DKIM
 * verifier's view of the header (`fromFields`, `headerFrom`), which feeds DMARC.
 */
export function authorProblem(result: unknown): string | undefined {
  const fields = at(result, 'dkim', 'fromFields');
  const addresses = at(result, 'dkim', 'headerFrom');
  if (fields === 0) return 'no From field';
  if (typeof fields === 'number' && fields > 1) return `${fields} From fields`;
  if (Array.isArray(addresses) && addresses.length === 0) return 'no address in From';
  if (Array.isArray(addresses) && addresses.length > 1) return `${addresses.length} addresses in From`;
  const dmarc = at(result, 'dmarc');
  return typeof dmarc === 'object' && dmarc !== null ? undefined : 'no single From domain';
}

/** DMARC when the From field names no single author: an error no later attempt can mend (RFC 8601 §2.7.1). */
const NO_SINGLE_AUTHOR = { result: 'permerror', domain: '', policy: null } as const;

/** The verdicts as the API shows them, from the result of mailauth's authenticate(). */
export function mapMailauthResult(result: unknown): SenderAuth {
  const spf = at(result, 'spf');
  const dmarc = at(result, 'dmarc');
  return {
    spf: { result: spf ? toAuthResult(at(spf, 'status', 'result')) : 'none', domain: str(at(spf, 'domain')) },
    // An unsigned message gives one `none` row without a domain: the API shows [] for it.
    dkim: signatureRows(result).map((row) => ({
        result: toDkimResult(row),
        domain: str(at(row, 'signingDomain')),
        selector: str(at(row, 'selector')),
      })),
    dmarc: authorProblem(result) === undefined
      ? {
          result: toAuthResult(at(dmarc, 'status', 'result')),
          domain: str(at(dmarc, 'status', 'header', 'from')) || str(at(dmarc, 'domain')),
          policy: toPolicy(at(dmarc, 'policy')),
        }
      : { ...NO_SINGLE_AUTHOR },
    arc: { result: toAuthResult(at(result, 'arc', 'status', 'result') ?? 'none') },
  };
}

/** Every method `temperror`: what a check that could not run at all (a library failure) gives. */
export function unverified(): SenderAuth {
  return {
    spf: { result: 'temperror', domain: '' },
    dkim: [],
    dmarc: { result: 'temperror', domain: '', policy: null },
    arc: { result: 'temperror' },
  };
}

/** The DKIM rows of a result that the API lists (not the `none` row of an unsigned message). */
export function signatureRows(result: unknown): unknown[] {
  const rows = at(result, 'dkim', 'results');
  return (Array.isArray(rows) ? (rows as unknown[]) : []).filter(
    (row) => !(at(row, 'status', 'result') === 'none' && str(at(row, 'signingDomain')) === ''),
  );
}
