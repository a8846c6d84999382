/** The filters of a wait, as `WaitTimeoutError` names them. */
export interface WaitFilters {
  /** Case-insensitive substring of the envelope recipient (`+tag` kept), e.g. `alice+signup@`. */
  to?: string;
  /** Case-insensitive substring of the sender. */
  from?: string;
  /** Case-insensitive substring of the subject. */
  subject?: string;
}

/**
 * Every failure of the client: `status` is the HTTP status (0 when the server could not be
 * reached), `code` the API's error code (`inbox_not_found`, `rate_limited`…), `network_error`
 * when unreachable, `invalid_response` for an answer that is not the API's, `timeout` for a wait.
 */
export class TempInboxError extends Error {
  readonly status: number;
  readonly code: string;
  /** Seconds the server asked to wait (`Retry-After`), for `rate_limited` and `unavailable`. */
  readonly retryAfter: number | undefined;

  constructor(status: number, code: string, message: string, options: { retryAfter?: number; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TempInboxError';
    this.status = status;
    this.code = code;
    this.retryAfter = options.retryAfter;
  }
}

/** A wait that found no matching message in its time: `code` is `timeout`, `status` 0. */
export class WaitTimeoutError extends TempInboxError {
  readonly filters: WaitFilters;
  readonly timeout: number;

  constructor(what: string, filters: WaitFilters, timeoutMs: number) {
    super(0, 'timeout', `No ${what} ${describeFilters(filters)}arrived within ${timeoutMs} ms.`);
    this.name = 'WaitTimeoutError';
    this.filters = { ...filters };
    this.timeout = timeoutMs;
  }
}

/** `to="x", subject="y" ` (with a trailing space), or `` without filters. */
export function describeFilters(filters: WaitFilters): string {
  const parts = (['to', 'from', 'subject'] as const)
    .filter((key) => filters[key] !== undefined && filters[key] !== '')
    .map((key) => `${key}=${JSON.stringify(filters[key])}`);
  return parts.length === 0 ? '' : `matching ${parts.join(', ')} `;
}

/** The name of the cause of a `network_error` that was the client's own per-request timeout. */
export const REQUEST_TIMEOUT_CAUSE = 'TimeoutError';

/** Whether a `network_error` is the client giving up on an attempt that did not answer in time. */
export function isRequestTimeout(error: TempInboxError): boolean {
  return error.code === 'network_error' && error.cause instanceof Error && error.cause.name === REQUEST_TIMEOUT_CAUSE;
}
