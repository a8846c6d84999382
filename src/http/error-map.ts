import type { ErrorCode } from '../domain/errors.js';

/**
 * HTTP status of every catalog code (docs/api.md "Errors"). Exhaustive: a new code in
 * domain/errors.ts does not compile until it has a status here.
 */
export const HTTP_STATUS: Record<ErrorCode, number> = {
  invalid_request: 400,
  username_invalid: 400,
  invalid_domain: 400,
  license_invalid: 400,
  session_required: 401,
  premium_required: 403,
  inbox_limit_reached: 403,
  cross_site_request: 403,
  inbox_not_found: 404,
  not_found: 404,
  method_not_allowed: 405,
  username_taken: 409,
  license_session_limit: 409,
  license_expired: 410,
  inbox_expired: 410,
  payload_too_large: 413,
  // SMTP-only codes: never raised by an HTTP handler; mapped for exhaustiveness.
  inbox_full: 507,
  too_many_recipients: 400,
  rate_limited: 429,
  // The database's disk is full: 507 Insufficient Storage (RFC 4918 §11.5), not 503, which
  // is kept for a database that cannot be reached (docs/api.md "Errors").
  storage_full: 507,
  unavailable: 503,
  internal_error: 500,
};
