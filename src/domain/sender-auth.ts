/**
 * Sender authentication verdicts as shown with every message (docs/api.md "What a message
 * tells"): RFC 8601 result keywords, reduced to the ones the API promises.
 */

/** The result keywords a verdict may carry (RFC 8601 §2.7, the subset common to all methods). */
export const AUTH_RESULTS = ['pass', 'fail', 'softfail', 'neutral', 'none', 'temperror', 'permerror'] as const;

/** One of AUTH_RESULTS. */
export type AuthResult = (typeof AUTH_RESULTS)[number];

/** A DMARC policy as published (RFC 7489 §6.3 `p=`), or null when no record applies. */
export type DmarcPolicy = 'none' | 'quarantine' | 'reject' | null;

/** SPF, DKIM (each signature), DMARC and ARC verdicts of one received message. */
export interface SenderAuth {
  spf: { result: AuthResult; domain: string };
  dkim: { result: AuthResult; domain: string; selector: string }[];
  dmarc: { result: AuthResult; domain: string; policy: DmarcPolicy };
  arc: { result: AuthResult };
}

/** Whether a value is one of AUTH_RESULTS. */
export function isAuthResult(value: unknown): value is AuthResult {
  return typeof value === 'string' && (AUTH_RESULTS as readonly string[]).includes(value);
}

/** Whether a value is a DmarcPolicy. */
export function isDmarcPolicy(value: unknown): value is DmarcPolicy {
  return value === null || value === 'none' || value === 'quarantine' || value === 'reject';
}

/** A link of a message: its URL and visible text ('' when none). */
export interface MessageLink {
  url: string;
  text: string;
}
