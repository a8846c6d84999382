import type { CheckResponse, Message, MessageDetail, MessageDetailResponse, MessageLink, WebhookCreated, WebhookState } from './api-types.js';
import { TempInboxError, type WaitFilters } from './errors.js';
import { follow, type FollowOptions } from './follow.js';
import { DEFAULT_WAIT_TIMEOUT_MS, MAX_PAGES, PAGE_LIMIT, REQUEST_TIMEOUT_MS } from './limits.js';
import type { Transport } from './transport.js';
import { pickFilters, waitFor, type CheckQuery, type WaitState } from './wait-for.js';

/** Filters and the time budget of a wait. */
export interface WaitOptions extends WaitFilters {
  /** Milliseconds before the wait rejects with WaitTimeoutError (default 60000). */
  timeout?: number;
}

/** A link wait: `match` is a case-insensitive substring of the link's URL or text, or a RegExp. */
export interface LinkWaitOptions extends WaitOptions {
  match?: string | RegExp;
}

/** What a handle is made from. */
export interface InboxInit {
  address?: string;
  username: string;
  domain?: string;
  expiresAt?: Date;
  /** Starting point: only messages received after this message id count; undefined: all. */
  after?: string;
  /** Ids earlier waits returned (to resume a handle's state, as the CLI does across runs). */
  returned?: Iterable<string>;
}

/** Extra time an attempt of a wait may take past the deadline before the client gives up on it. */
const DEADLINE_GRACE_MS = 500;

/**
 * A handle on one inbox. Waits on the same handle each return a different message: the
 * oldest matching one after the handle's starting point that no earlier wait returned.
 */
export class Inbox {
  /** `username@domain` (just the username when the handle was made from a bare name). */
  readonly address: string;
  readonly username: string;
  /** `""` when the handle was made from a bare name. */
  readonly domain: string;
  /** When the inbox expires; undefined on a handle made by `client.inbox()`, which asks nothing. */
  readonly expiresAt: Date | undefined;
  private readonly transport: Transport;
  private readonly state: WaitState;

  constructor(transport: Transport, init: InboxInit) {
    this.transport = transport;
    this.username = init.username;
    this.domain = init.domain ?? '';
    this.address = init.address ?? (this.domain === '' ? init.username : `${init.username}@${this.domain}`);
    this.expiresAt = init.expiresAt;
    this.state = { after: init.after, returned: new Set(init.returned ?? []) };
  }

  /** The starting point (a message id), or undefined when every message of the inbox counts. */
  get after(): string | undefined {
    return this.state.after;
  }

  /** The ids earlier waits on this handle returned, in the order they were returned. */
  get returned(): string[] {
    return [...this.state.returned];
  }

  /** The oldest unreturned message after the starting point that matches the filters. */
  async waitForMessage(options: WaitOptions = {}): Promise<Message> {
    const { message } = await this.wait(options, 'message', () => true);
    return message;
  }

  /** As waitForMessage, among messages with a one-time code: `code` is its most likely one. */
  async waitForCode(options: WaitOptions = {}): Promise<{ code: string; message: Message }> {
    const { result, message } = await this.wait(options, 'message with a code', (m) => m.codes[0]);
    return { code: result, message };
  }

  /** As waitForMessage, among messages with a link that fits `match` (without it, any link: the first). */
  async waitForLink(options: LinkWaitOptions = {}): Promise<{ url: string; text: string; message: Message }> {
    const what = options.match === undefined ? 'message with a link' : `message with a link matching ${String(options.match)}`;
    const { result, message } = await this.wait(options, what, (m) => m.links.find((link) => linkMatches(link, options.match)));
    return { url: result.url, text: result.text, message };
  }

  /** Every message after the starting point that matches, newest first, every page. */
  async *messages(filters: WaitFilters = {}): AsyncGenerator<Message, void, undefined> {
    let before: string | undefined;
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const answer = await this.check({ ...pickFilters(filters), since: this.state.after, before, limit: PAGE_LIMIT });
      yield* answer.emails;
      const last = answer.emails.at(-1);
      if (!answer.has_more || last === undefined) return;
      before = last.id;
    }
    throw new TempInboxError(0, 'too_many_pages', `The inbox has more than ${MAX_PAGES * PAGE_LIMIT} messages; the listing stopped there.`);
  }

  /** One whole message with its headers (`GET /api/messages/<id>`). */
  async message(id: string): Promise<MessageDetail> {
    const { success: _success, ...detail } = await this.transport.json<MessageDetailResponse>(`/api/messages/${encodeURIComponent(id)}`);
    return detail;
  }

  /** The message as received, byte for byte (after the server's trace headers). */
  async raw(id: string): Promise<Uint8Array> {
    return this.transport.bytes(`/api/messages/${encodeURIComponent(id)}/raw`, { accept: 'message/rfc822' });
  }

  /** The messages that arrive from now on, live, in order; see FollowOptions. */
  follow(options: FollowOptions = {}): AsyncGenerator<Message, void, undefined> {
    return follow(this.transport, this.path('/api/inbox/', '/events'), (query) => this.check(query), options);
  }

  /**
   * Sets the inbox's webhook (Premium), replacing the one it had: each message stored from now
   * on is POSTed to `url`, signed with `secret` (16 to 128 characters; the server makes one when
   * it is left out). The answer is the one place the secret is shown.
   */
  async setWebhook(url: string, options: { secret?: string } = {}): Promise<WebhookCreated> {
    const { webhook } = await this.transport.json<{ webhook: WebhookCreated }>(this.path('/api/inbox/', '/webhook'), {
      method: 'PUT',
      body: { url, secret: options.secret },
    });
    return { url: webhook.url, secret: webhook.secret, created_at: webhook.created_at };
  }

  /** The inbox's webhook (null when it has none, without its secret) and its last 20 delivery attempts, newest first. */
  async webhook(): Promise<WebhookState> {
    const { webhook, deliveries } = await this.transport.json<WebhookState>(this.path('/api/inbox/', '/webhook'));
    return { webhook, deliveries };
  }

  /** Removes the inbox's webhook and drops the deliveries it still owed. */
  async deleteWebhook(): Promise<void> {
    await this.transport.json(this.path('/api/inbox/', '/webhook'), { method: 'DELETE' });
  }

  /** Discards the inbox and its messages. */
  async delete(): Promise<void> {
    await this.transport.json(this.path('/api/inbox/'), { method: 'DELETE' });
  }

  private async wait<T>(options: WaitOptions, what: string, pick: (message: Message) => T | undefined): Promise<{ result: T; message: Message }> {
    const timeoutMs = options.timeout ?? DEFAULT_WAIT_TIMEOUT_MS;
    if (!Number.isFinite(timeoutMs) || timeoutMs < 0) throw new TempInboxError(0, 'invalid_request', `timeout must be a number of milliseconds ≥ 0, not ${timeoutMs}.`);
    const page = (query: CheckQuery, deadline: number, timeout?: number) =>
      this.check(query, { deadline, timeoutMs: Math.max(1, Math.min(timeout ?? REQUEST_TIMEOUT_MS, deadline - Date.now() + DEADLINE_GRACE_MS)) });
    const all = async (query: CheckQuery, deadline: number, first?: CheckResponse): Promise<Message[]> => {
      const out: Message[] = [];
      let answer = first ?? (await page(query, deadline));
      for (let pages = 1; ; pages += 1) {
        out.push(...answer.emails);
        const last = answer.emails.at(-1);
        if (!answer.has_more || last === undefined) return out;
        if (pages >= MAX_PAGES) throw new TempInboxError(0, 'too_many_pages', `More than ${MAX_PAGES * PAGE_LIMIT} messages match; the wait stopped reading there.`);
        answer = await page({ ...query, wait: undefined, before: last.id }, deadline);
      }
    };
    return waitFor(this.state, { filters: options, timeoutMs, what, pick }, page, all);
  }

  private check(query: CheckQuery, options: { deadline?: number; timeoutMs?: number } = {}): Promise<CheckResponse> {
    return this.transport.json<CheckResponse>(this.path('/api/check/'), { query: { ...query }, ...options });
  }

  private path(prefix: string, suffix = ''): string {
    return `${prefix}${encodeURIComponent(this.address)}${suffix}`;
  }
}

/** Whether a link fits a link wait's `match`. */
function linkMatches(link: MessageLink, match: string | RegExp | undefined): boolean {
  if (match === undefined) return true;
  if (typeof match === 'string') {
    const needle = match.toLowerCase();
    return link.url.toLowerCase().includes(needle) || link.text.toLowerCase().includes(needle);
  }
  match.lastIndex = 0;
  if (match.test(link.url)) return true;
  match.lastIndex = 0;
  return match.test(link.text);
}
