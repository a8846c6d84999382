/**
 * The error catalog: every failure the product can report, as a stable code without a
 * transport number. `http/error-map.ts` and `smtp/replies.ts` map each code exhaustively,
 * so adding a code here does not compile until both transports decide its answer.
 */
export const ERROR_CODES = [
  'invalid_request',
  'username_invalid',
  'invalid_domain',
  'session_required',
  'premium_required',
  'inbox_limit_reached',
  'cross_site_request',
  'webhook_url_forbidden',
  'inbox_not_found',
  'webhook_not_found',
  'not_found',
  'method_not_allowed',
  'username_taken',
  'license_invalid',
  'license_session_limit',
  'license_expired',
  'inbox_expired',
  'payload_too_large',
  'inbox_full',
  'too_many_recipients',
  'rate_limited',
  'storage_full',
  'unavailable',
  'internal_error',
] as const;

/** A stable, documented, snake_case error code. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/** Default human sentence per code; a thrower may give a more specific one. */
export const ERROR_MESSAGES: Record<ErrorCode, string> = {
  invalid_request: 'The request is malformed.',
  username_invalid:
    'A username is 3 to 32 characters of a-z, 0-9, ".", "_" and "-", starts and ends with a letter or digit, and has no "..".',
  invalid_domain: 'That domain is not served here; GET /api/domains lists the ones that are.',
  session_required: 'This call needs the session cookie set by GET /api/create.',
  premium_required: 'Custom usernames need a Premium license redeemed in this session.',
  inbox_limit_reached: 'This Premium license already has its maximum number of active inboxes.',
  cross_site_request:
    'A page of another site (or another origin) may not make this call; use the tempinbox web app or a non-browser client.',
  webhook_url_forbidden:
    'Webhooks go to public addresses only; this URL\'s host is or resolves to a loopback, private, link-local, shared or reserved address.',
  inbox_not_found: 'No such inbox in this session.',
  webhook_not_found: 'This inbox has no webhook; set one with PUT /api/inbox/<username>/webhook first.',
  not_found: 'Not found.',
  method_not_allowed: 'Method not allowed on this path.',
  username_taken: 'That username is not available.',
  license_invalid: 'That license key is not valid.',
  license_session_limit: 'That license is already active in its maximum number of sessions.',
  license_expired: 'That license has expired.',
  inbox_expired: 'This inbox has expired.',
  payload_too_large: 'The request body is too large.',
  inbox_full: 'The inbox holds its maximum number of messages.',
  too_many_recipients: 'Too many recipients for one message.',
  rate_limited: 'Too many requests; try again later.',
  storage_full: 'The server is out of storage space; try again later.',
  unavailable: 'The service is temporarily unavailable; try again shortly.',
  internal_error: 'Something went wrong on our side.',
};

/** A failure with a catalog code; transports translate it, never the thrower. */
export class AppError extends Error {
  readonly code: ErrorCode;
  /** Seconds after which a retry may succeed (rate limits). */
  readonly retryAfterSeconds: number | undefined;
  /** The budget that was exhausted (rate limits), for the RateLimit-Limit header. */
  readonly rateLimit: number | undefined;

  constructor(code: ErrorCode, message?: string, options?: { retryAfterSeconds?: number; rateLimit?: number; cause?: unknown }) {
    super(message ?? ERROR_MESSAGES[code], options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.code = code;
    this.retryAfterSeconds = options?.retryAfterSeconds;
    this.rateLimit = options?.rateLimit;
  }
}

/** True when `value` is an AppError (also across module copies). */
export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}
