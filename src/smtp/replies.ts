import { isAppError, type ErrorCode } from '../domain/errors.js';
import { StoreFailureError, StoreFullError, StoreUnavailableError } from '../ports/mail-store.js';

/** One SMTP reply: basic code (RFC 5321 §4.2), enhanced status code (RFC 3463) and text. */
export interface SmtpReply {
  code: number;
  enhanced: string;
  text: string;
}

/**
 * The SMTP answer to every catalog code (docs/architecture.md). The text is fixed here, never
 * taken from the error, so nothing internal reaches the wire. 5xx tells the sending MTA to
 * bounce, 4xx to queue and retry: a code we are unsure about must be 4xx, never lose mail.
 */
export const SMTP_REPLIES: Record<ErrorCode, SmtpReply> = {
  // The recipient path is syntactically not a mailbox: 501 syntax error in parameters,
  // X.1.3 "bad destination mailbox address syntax" (RFC 3463 §3.2).
  invalid_request: { code: 501, enhanced: '5.1.3', text: 'Bad destination mailbox address syntax' },
  // Same situation as invalid_request when a local part breaks the username rules.
  username_invalid: { code: 501, enhanced: '5.1.3', text: 'Bad destination mailbox address syntax' },
  // A domain we do not serve: we are an MX, never a relay. 550 + X.7.1 "delivery not
  // authorized, message refused" is what MTAs answer to relay attempts (RFC 5321 §3.6.2).
  invalid_domain: { code: 550, enhanced: '5.7.1', text: 'Relay access denied' },
  // Not raised over SMTP (no cookies in SMTP); if it ever is, it is our bug: retry later.
  session_required: { code: 451, enhanced: '4.3.0', text: 'Local error in processing, try again later' },
  // Not raised over SMTP (a web-session rule); our bug if seen: retry later.
  premium_required: { code: 451, enhanced: '4.3.0', text: 'Local error in processing, try again later' },
  // Not raised over SMTP (inbox creation is HTTP only); our bug if seen: retry later.
  inbox_limit_reached: { code: 451, enhanced: '4.3.0', text: 'Local error in processing, try again later' },
  // Not raised over SMTP (a browser Fetch Metadata rule); our bug if seen: retry later.
  cross_site_request: { code: 451, enhanced: '4.3.0', text: 'Local error in processing, try again later' },
  // Not raised over SMTP (a webhook is set over HTTP); our bug if seen: retry later.
  webhook_url_forbidden: { code: 451, enhanced: '4.3.0', text: 'Local error in processing, try again later' },
  // No active inbox of that username: 550 mailbox unavailable, X.1.1 "bad destination
  // mailbox address" (RFC 3463 §3.2): permanent, the sender bounces at once.
  inbox_not_found: { code: 550, enhanced: '5.1.1', text: 'No such mailbox' },
  // Not raised over SMTP (a webhook is tested over HTTP); our bug if seen: retry later.
  webhook_not_found: { code: 451, enhanced: '4.3.0', text: 'Local error in processing, try again later' },
  // Not raised over SMTP (unknown HTTP route or message); nearest meaning: no such mailbox.
  not_found: { code: 550, enhanced: '5.1.1', text: 'No such mailbox' },
  // Not raised over SMTP (an HTTP verb rule); nearest meaning: 502 command not implemented.
  method_not_allowed: { code: 502, enhanced: '5.5.1', text: 'Command not implemented' },
  // Not raised over SMTP (username reservation is HTTP only); our bug if seen: retry later.
  username_taken: { code: 451, enhanced: '4.3.0', text: 'Local error in processing, try again later' },
  // Not raised over SMTP (license redeem is HTTP only); our bug if seen: retry later.
  license_invalid: { code: 451, enhanced: '4.3.0', text: 'Local error in processing, try again later' },
  // Not raised over SMTP (license redeem is HTTP only); our bug if seen: retry later.
  license_session_limit: { code: 451, enhanced: '4.3.0', text: 'Local error in processing, try again later' },
  // Not raised over SMTP (license redeem is HTTP only); our bug if seen: retry later.
  license_expired: { code: 451, enhanced: '4.3.0', text: 'Local error in processing, try again later' },
  // Expired inboxes are gone for good (docs/api.md "Expiry": SMTP 550): same answer as unknown, so
  // the reply does not reveal that the address once existed.
  inbox_expired: { code: 550, enhanced: '5.1.1', text: 'No such mailbox' },
  // Over MAX_MESSAGE_BYTES: 552 exceeded storage allocation with X.3.4 "message too big for
  // system" (RFC 3463 §3.4; RFC 1870 §6.1 uses 552 for SIZE violations).
  payload_too_large: { code: 552, enhanced: '5.3.4', text: 'Message size exceeds fixed maximum message size' },
  // At the inbox's message cap: 452 insufficient storage with X.2.2 "mailbox full" is
  // transient (RFC 3463 §3.3), so the sender retries after the owner deletes mail.
  inbox_full: { code: 452, enhanced: '4.2.2', text: 'Mailbox full' },
  // Past the recipients limit: RFC 5321 §4.5.3.1.10 prescribes 452 for "too many
  // recipients" (X.5.3, RFC 3463 §3.6); the client sends the rest in another transaction.
  too_many_recipients: { code: 452, enhanced: '4.5.3', text: 'Too many recipients' },
  // Fair-use limit: 450 (transient, for this command only, so the connection and the
  // other recipients go on; 421 would drop the whole session) with X.7.0 "other security
  // or policy status" (RFC 3463 §3.8): the sender's queue retries later.
  rate_limited: { code: 450, enhanced: '4.7.0', text: 'Rate limit exceeded, try again later' },
  // The database's disk is full, or below MIN_FREE_DISK_BYTES: 452 insufficient system
  // storage with X.3.1 "mail system full" (RFC 5321 §4.2.3, RFC 3463 §3.4): transient, the
  // sender's queue retries once space returns.
  storage_full: { code: 452, enhanced: '4.3.1', text: 'Insufficient system storage' },
  // Database down: 451 local error in processing, X.3.0 "other or undefined mail system
  // status": transient, the message stays in the sender's queue and is retried.
  unavailable: { code: 451, enhanced: '4.3.0', text: 'Local error in processing, try again later' },
  // A bug on our side must not bounce mail: the same transient 451 4.3.0.
  internal_error: { code: 451, enhanced: '4.3.0', text: 'Local error in processing, try again later' },
};

/** What any failure we do not know (or a store outage) is answered with: retry later. */
const TEMPORARY_FAILURE: SmtpReply = SMTP_REPLIES.unavailable;

/** The catalog code of anything a use case threw: AppError by its code, store errors by their cause, the rest a bug. */
export function errorCodeOf(error: unknown): ErrorCode {
  if (isAppError(error)) return error.code;
  if (error instanceof StoreUnavailableError) return 'unavailable';
  if (error instanceof StoreFullError) return 'storage_full';
  if (error instanceof StoreFailureError) return 'internal_error';
  return 'internal_error';
}

/**
 * The reply for anything a use case threw: AppError by its code, a store outage 451 4.3.0,
 * a full disk 452 4.3.1, every other error 451 4.3.0 (the sender retries). Never throws;
 * never echoes the error text.
 */
export function replyForError(error: unknown): SmtpReply {
  return SMTP_REPLIES[errorCodeOf(error)] ?? TEMPORARY_FAILURE;
}

/** How loudly a refusal is logged: `error` for a bug of ours (internal_error), else `warn`. */
export function logLevelFor(error: unknown): 'error' | 'warn' {
  return errorCodeOf(error) === 'internal_error' ? 'error' : 'warn';
}

/**
 * Replies after DATA that differ from SMTP_REPLIES: the store decides each inbox again when
 * the message is committed (docs/api.md "SMTP").
 */
export const SMTP_DATA_REPLIES: Partial<Record<ErrorCode, SmtpReply>> = {
  // Every recipient inbox expired between RCPT and the end of DATA. 450 (transient, so the
  // sender's queue owns the message and its bounce) with X.2.1 "mailbox disabled, not
  // accepting messages" (RFC 3463 §3.3); a retry meets 550 5.1.1 at RCPT.
  inbox_expired: { code: 450, enhanced: '4.2.1', text: 'Mailbox expired, not accepting messages' },
};

/** The reply for a failure of the delivery after DATA: SMTP_DATA_REPLIES first, else as replyForError. */
export function replyForDataError(error: unknown): SmtpReply {
  return (isAppError(error) ? SMTP_DATA_REPLIES[error.code] : undefined) ?? replyForError(error);
}

/** The reply as one wire line without CRLF, e.g. `550 5.7.1 Relay access denied`. */
export function formatReply(reply: SmtpReply): string {
  return `${reply.code} ${reply.enhanced} ${reply.text}`;
}
