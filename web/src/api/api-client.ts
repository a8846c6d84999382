import { ApiError } from './api-error.js';
import type { CheckResponse, InboxResponse, Message, RedeemResponse, SessionResponse, WebhookCreated, WebhookState, WebhookTestResponse } from '@tempinbox/client';

/** No answer within this time counts as a network failure; polls must not pile up. */
const REQUEST_TIMEOUT_MS = 15_000;

/**
 * One call to the same-origin JSON API with the session cookie. Failures become ApiError
 * with the contract's code; the server's `message` is not shown (the page has its own words).
 */
async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
  } catch {
    throw new ApiError('network', 0);
  }
  let json: unknown = null;
  try {
    json = await response.json();
  } catch {
    // A proxy's HTML error page or an empty body: reported by status below.
  }
  if (response.ok && json !== null) return json as T;
  const code = (json as { error?: { code?: unknown } } | null)?.error?.code;
  const retry = Number(response.headers.get('retry-after'));
  throw new ApiError(typeof code === 'string' ? code : response.status >= 500 ? 'unavailable' : 'unexpected', response.status, Number.isFinite(retry) && retry > 0 ? retry : null);
}

function sinceQuery(since: string | undefined): string {
  return since ? `?since=${encodeURIComponent(since)}` : '';
}

/** The public API as the page uses it (docs/api.md). */
export const api = {
  session: () => call<SessionResponse>('GET', '/api/session'),
  domains: () => call<{ domains: string[] }>('GET', '/api/domains'),
  create: (options: { username?: string; domain?: string } = {}) => {
    const query = new URLSearchParams();
    if (options.username) query.set('username', options.username);
    if (options.domain) query.set('domain', options.domain);
    const text = query.toString();
    const suffix = text === '' ? '' : `?${text}`;
    return call<InboxResponse>('GET', `/api/create${suffix}`);
  },
  check: (username: string, since?: string) =>
    call<CheckResponse>('GET', `/api/check/${encodeURIComponent(username)}${sinceQuery(since)}`),
  /** One whole message (a listing may have cut a long one: `truncated`). */
  message: (id: string) => call<Message>('GET', `/api/messages/${encodeURIComponent(id)}`),
  discardInbox: (username: string) => call<unknown>('DELETE', `/api/inbox/${encodeURIComponent(username)}`),
  deleteMessage: (id: string) => call<unknown>('DELETE', `/api/messages/${encodeURIComponent(id)}`),
  redeem: (key: string) => call<RedeemResponse>('POST', '/api/premium/redeem', { key }),
  /** The inbox's webhook (null when none) and its last delivery attempts, newest first. */
  webhook: (username: string) => call<WebhookState>('GET', webhookPath(username)),
  /** Sets (or replaces) the inbox's webhook; the answer is the only one that shows the secret. */
  setWebhook: (username: string, url: string, secret?: string) =>
    call<{ webhook: WebhookCreated }>('PUT', webhookPath(username), secret === undefined ? { url } : { url, secret }),
  deleteWebhook: (username: string) => call<unknown>('DELETE', webhookPath(username)),
  /** Posts the test event to the webhook through the same queue as messages. */
  testWebhook: (username: string) => call<WebhookTestResponse>('POST', `${webhookPath(username)}/test`),
};

function webhookPath(username: string): string {
  return `/api/inbox/${encodeURIComponent(username)}/webhook`;
}

/** Download address of a message's original `.eml`. */
export const rawUrl = (id: string): string => `/api/messages/${encodeURIComponent(id)}/raw`;

/** Download address of one attachment. */
export const attachmentUrl = (id: string, aid: string): string =>
  `/api/messages/${encodeURIComponent(id)}/attachments/${encodeURIComponent(aid)}`;

/** Address of an inbox's event stream, resuming after `since` when given. */
export const eventsUrl = (username: string, since?: string): string =>
  `/api/inbox/${encodeURIComponent(username)}/events${sinceQuery(since)}`;
