/** Codes the page can meet: the API's error catalog plus two of its own (no answer, odd answer). */
export type ApiErrorCode = string;

/** A failed API call: the contract's error code, the HTTP status and, for 429, when to retry. */
export class ApiError extends Error {
  constructor(
    readonly code: ApiErrorCode,
    readonly status: number,
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(code);
    this.name = 'ApiError';
  }
}
