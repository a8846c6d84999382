import type { ErrorResponse } from './api-types.js';
import { REQUEST_TIMEOUT_CAUSE, TempInboxError } from './errors.js';
import { BACKOFF_MAX_MS, BACKOFF_START_MS, MAX_RETRIES, MAX_RETRY_AFTER_MS, REQUEST_TIMEOUT_MS } from './limits.js';
import { sleep } from './sleep.js';

/** The session cookie's name (docs/api.md "Session cookie"). */
export const SESSION_COOKIE = 'tempinbox_session';

/** One call to the API. */
export interface CallOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Query parameters; `undefined` ones are left out. */
  query?: Record<string, string | number | undefined>;
  /** Sent as JSON. */
  body?: unknown;
  accept?: string;
  /**
   * A wait's deadline (epoch ms): 429, 503 and network errors are retried while it allows.
   * Without it they are retried at most MAX_RETRIES times.
   */
  deadline?: number;
  /** Give up on one attempt after this many ms (default REQUEST_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Whether a network error may be retried: not for calls that create something. */
  retryNetwork?: boolean;
  signal?: AbortSignal;
  headers?: Record<string, string>;
}

/**
 * HTTP to one tempinbox server over `fetch`: the session cookie kept by hand (Node's fetch has
 * no cookie jar; a browser drops the Cookie header and uses its own), API errors turned into
 * `TempInboxError`, and the retry policy for 429, 503 and unreachable servers.
 */
export class Transport {
  readonly baseUrl: string;
  session: string | undefined;
  private readonly fetchImpl: typeof fetch;

  constructor(baseUrl: string, session: string | undefined, fetchImpl: typeof fetch | undefined) {
    // Refused here, not at the first call, so that every call fails only with TempInboxError.
    if (!isHttpUrl(baseUrl)) throw new TypeError(`baseUrl must be an http:// or https:// URL, not ${JSON.stringify(baseUrl)}.`);
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.session = session === '' ? undefined : session;
    this.fetchImpl = fetchImpl ?? ((input, init) => fetch(input, init));
  }

  /** A JSON answer, with retries. */
  async json<T>(path: string, options: CallOptions = {}): Promise<T> {
    return this.withRetries(options, () => this.once(path, options, async (response) => parseJson<T>(response)));
  }

  /** The body's bytes, with retries. */
  async bytes(path: string, options: CallOptions = {}): Promise<Uint8Array> {
    return this.withRetries(options, () => this.once(path, options, async (response) => new Uint8Array(await response.arrayBuffer())));
  }

  /**
   * One attempt whose body is left unread (an event stream): the attempt's timeout covers the
   * answer's headers only, so the caller bounds the reading itself.
   */
  async open(path: string, options: CallOptions): Promise<Response> {
    return this.once(path, options, async (response) => response);
  }

  /** Runs `attempt`, retrying 429, 503 and network errors as the options allow. */
  async withRetries<T>(options: CallOptions, attempt: () => Promise<T>): Promise<T> {
    for (let tries = 0; ; tries += 1) {
      try {
        return await attempt();
      } catch (error) {
        const delay = retryDelay(error, tries, options);
        if (delay === undefined) throw error;
        await sleep(delay, options.signal);
      }
    }
  }

  private async once<T>(path: string, options: CallOptions, read: (response: Response) => Promise<T>): Promise<T> {
    const url = new URL(this.baseUrl + path);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = { accept: options.accept ?? 'application/json', ...options.headers };
    if (this.session !== undefined) headers.cookie = `${SESSION_COOKIE}=${this.session}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    const timeout = new AbortController();
    const timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
    const timer = setTimeout(() => timeout.abort(), timeoutMs);
    const signal = options.signal === undefined ? timeout.signal : AbortSignal.any([options.signal, timeout.signal]);
    try {
      let response: Response;
      try {
        response = await this.fetchImpl(url, {
          method: options.method ?? 'GET',
          headers,
          body: options.body === undefined ? undefined : JSON.stringify(options.body),
          signal,
          redirect: 'manual',
          // In a browser the page's own cookie goes along (the Cookie header above is dropped there).
          credentials: 'include',
        });
      } catch (error) {
        throw this.failure(error, options, timeout.signal, timeoutMs);
      }
      this.keepSession(response);
      if (!response.ok) throw await errorOf(response);
      try {
        return await read(response);
      } catch (error) {
        if (error instanceof TempInboxError) throw error;
        throw this.failure(error, options, timeout.signal, timeoutMs);
      }
    } finally {
      clearTimeout(timer);
    }
  }

  /** What a failed fetch means: the caller's abort stays an abort; the rest is network_error. */
  private failure(error: unknown, options: CallOptions, timeoutSignal: AbortSignal, timeoutMs: number): unknown {
    if (options.signal?.aborted === true) return options.signal.reason;
    if (timeoutSignal.aborted) {
      const cause = Object.assign(new Error(`no answer within ${timeoutMs} ms`), { name: REQUEST_TIMEOUT_CAUSE });
      return new TempInboxError(0, 'network_error', `Cannot reach ${this.baseUrl}: no answer within ${timeoutMs} ms.`, { cause });
    }
    return new TempInboxError(0, 'network_error', `Cannot reach ${this.baseUrl}: ${describeCause(error)}.`, { cause: error });
  }

  /** Takes the session cookie from Set-Cookie (Node's fetch exposes it; a browser does not). */
  private keepSession(response: Response): void {
    const cookies = typeof response.headers.getSetCookie === 'function' ? response.headers.getSetCookie() : [];
    for (const cookie of cookies) {
      const match = new RegExp(`^\\s*${SESSION_COOKIE}=([^;]*)`).exec(cookie);
      if (match?.[1] !== undefined && match[1] !== '') this.session = match[1];
    }
  }
}

/** Whether `value` is an absolute http(s) URL. */
function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

/** How long to wait before retrying `error`, or undefined when it must not be retried. */
function retryDelay(error: unknown, tries: number, options: CallOptions): number | undefined {
  if (!(error instanceof TempInboxError)) return undefined;
  const network = error.code === 'network_error';
  if (!(error.status === 429 || error.status === 503 || (network && options.retryNetwork !== false))) return undefined;
  const delay = error.retryAfter !== undefined ? error.retryAfter * 1000 : Math.min(BACKOFF_START_MS * 2 ** tries, BACKOFF_MAX_MS);
  if (options.deadline !== undefined) return Date.now() + delay < options.deadline ? delay : undefined;
  return tries < MAX_RETRIES && delay <= MAX_RETRY_AFTER_MS ? delay : undefined;
}

/** The API's error answer as a TempInboxError (any other answer gets a code of its own). */
async function errorOf(response: Response): Promise<TempInboxError> {
  const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
  let body: Partial<ErrorResponse> | undefined;
  try {
    body = (await response.json()) as Partial<ErrorResponse>;
  } catch {
    body = undefined;
  }
  const code = typeof body?.error?.code === 'string' ? body.error.code : `http_${response.status}`;
  const message = typeof body?.error?.message === 'string' ? body.error.message : `HTTP ${response.status} ${response.statusText}`.trim();
  return new TempInboxError(response.status, code, message, retryAfter === undefined ? {} : { retryAfter });
}

/** `Retry-After` in seconds (RFC 9110 §10.2.3: delay-seconds or an HTTP-date). */
export function parseRetryAfter(value: string | null): number | undefined {
  if (value === null) return undefined;
  if (/^\s*\d+\s*$/.test(value)) return Number(value);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

async function parseJson<T>(response: Response): Promise<T> {
  const text = await response.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new TempInboxError(response.status, 'invalid_response', `The server's answer is not JSON (is ${response.url} a tempinbox server?).`);
  }
}

/** The innermost reason a fetch failed (undici wraps it: TypeError "fetch failed" → cause). */
function describeCause(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error && current.cause !== undefined; depth += 1) current = current.cause;
  if (current instanceof Error) {
    const code = (current as Error & { code?: unknown }).code;
    return typeof code === 'string' ? `${code} (${current.message})` : current.message;
  }
  return String(current);
}
