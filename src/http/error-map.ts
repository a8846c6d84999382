import type { FastifyBaseLogger, FastifyError } from 'fastify';
import { AppError, ERROR_MESSAGES, type ErrorCode } from '../domain/errors.js';
import { StoreFullError, StoreUnavailableError } from '../ports/mail-store.js';

/**
 * HTTP status of every catalog code (docs/api.md "Errors"). Exhaustive: a new code in
 * domain/errors.ts does not compile until it has a status here.
 */
export const HTTP_STATUS: Record<ErrorCode, number> = {
  invalid_request: 400,
  username_invalid: 400,
  invalid_domain: 400,
  license_invalid: 400,
  webhook_url_forbidden: 400,
  session_required: 401,
  premium_required: 403,
  inbox_limit_reached: 403,
  cross_site_request: 403,
  inbox_not_found: 404,
  webhook_not_found: 404,
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

/** Maps a thrown value to its catalog error, logging what an operator must see (a bug, an outage). */
export function logAppError(log: FastifyBaseLogger, error: unknown): AppError {
  const appError = toAppError(error);
  if (appError.code === 'internal_error') log.error({ err: error }, 'unhandled error');
  else if (appError.code === 'unavailable') log.warn({ err: error }, 'database unavailable');
  else if (appError.code === 'storage_full') log.warn({ err: error }, 'database disk full');
  return appError;
}

/** The contract's error answer: status, headers (Retry-After and the budget for 429) and body. */
export function errorAnswer(error: AppError): { status: number; headers: Record<string, string>; body: string } {
  const headers: Record<string, string> = {};
  if (error.retryAfterSeconds !== undefined) {
    // The headers describe the exhausted budget, replacing any set earlier for another one.
    headers['Retry-After'] = String(error.retryAfterSeconds);
    if (error.rateLimit !== undefined) headers['RateLimit-Limit'] = String(error.rateLimit);
    headers['RateLimit-Remaining'] = '0';
    headers['RateLimit-Reset'] = String(error.retryAfterSeconds);
  }
  headers['Cache-Control'] = 'no-store';
  headers['Content-Type'] = 'application/json; charset=utf-8';
  const body = JSON.stringify({ success: false, error: { code: error.code, message: error.message } });
  return { status: HTTP_STATUS[error.code], headers, body };
}

/** Fastify's own client-error codes and what they mean in the catalog. */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'payload_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'invalid_request',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'invalid_request',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'invalid_request',
  FST_ERR_CTP_INVALID_JSON_BODY: 'invalid_request',
  FST_ERR_VALIDATION: 'invalid_request',
};

/** Any thrown value → a catalog error; only a genuine bug becomes internal_error (500). */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (error instanceof StoreUnavailableError) return new AppError('unavailable', undefined, { cause: error });
  if (error instanceof StoreFullError) return new AppError('storage_full', undefined, { cause: error });
  // StoreFailureError (a failing query: our bug) falls through to internal_error below.
  const fastifyError = error as Partial<FastifyError> & { validation?: unknown };
  if (fastifyError.validation !== undefined) {
    return new AppError('invalid_request', `Invalid request: ${fastifyError.message ?? 'validation failed'}.`);
  }
  const mapped = fastifyError.code === undefined ? undefined : FASTIFY_CODES[fastifyError.code];
  if (mapped !== undefined) {
    const message = mapped === 'payload_too_large' ? ERROR_MESSAGES.payload_too_large : `Invalid request: ${fastifyError.message}.`;
    return new AppError(mapped, message);
  }
  // JSON.parse errors and other client errors Fastify raises with a 4xx status.
  if (typeof fastifyError.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return new AppError(fastifyError.statusCode === 413 ? 'payload_too_large' : 'invalid_request');
  }
  return new AppError('internal_error', undefined, { cause: error });
}

