import type { DomainsResponse, InboxResponse, Limits, RedeemResponse, SessionResponse } from './api-types.js';
import { TempInboxError } from './errors.js';
import { Inbox } from './inbox.js';
import { Transport } from './transport.js';

/** Where a client talks to, and as whom. */
export interface ClientOptions {
  /**
   * An absolute http(s) URL (a TypeError at construction otherwise). Default: `TEMPINBOX_URL`
   * where there is a process environment, else http://localhost:8080.
   */
  baseUrl?: string;
  /** A session cookie value to resume (`client.session` of an earlier client). */
  session?: string;
  /** The fetch to use (a proxy agent, a test double); default the global fetch. */
  fetch?: typeof fetch;
}

/**
 * A handle whose expiry is known: those `createInbox()` and `inboxes()` give. A handle from
 * `client.inbox()` asks nothing, so its `expiresAt` may be undefined.
 */
export type CreatedInbox = Inbox & { readonly expiresAt: Date };

/** Whether a handle's expiry is known (a valid date). */
function hasExpiry(inbox: Inbox): inbox is CreatedInbox {
  return inbox.expiresAt instanceof Date && !Number.isNaN(inbox.expiresAt.getTime());
}

/** The base URL when none is given. */
export const DEFAULT_BASE_URL = 'http://localhost:8080';

/** `TEMPINBOX_URL` of the process environment, where there is one (Node; not a browser). */
function environmentUrl(): string | undefined {
  const env = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env;
  const value = env?.TEMPINBOX_URL;
  return value === undefined || value === '' ? undefined : value;
}

/**
 * A client of one tempinbox server and one session. It keeps the session cookie itself (the
 * server sets it on the first create or redeem); `client.session` is its value, to resume the
 * session in another client or process.
 */
export class TempInboxClient {
  private readonly transport: Transport;

  constructor(options: ClientOptions = {}) {
    this.transport = new Transport(options.baseUrl ?? environmentUrl() ?? DEFAULT_BASE_URL, options.session, options.fetch);
  }

  /** The server's base URL. */
  get baseUrl(): string {
    return this.transport.baseUrl;
  }

  /** The current session cookie's value; undefined before the first create or redeem. */
  get session(): string | undefined {
    return this.transport.session;
  }

  /** The domains new addresses can have; the first is the default. */
  async domains(): Promise<string[]> {
    return (await this.transport.json<DomainsResponse>('/api/domains')).domains;
  }

  /**
   * Creates an inbox (a free session gets its current one back while it is active). The
   * handle sees every message of the inbox.
   */
  async createInbox(options: { username?: string; domain?: string } = {}): Promise<CreatedInbox> {
    const created = await this.transport.json<InboxResponse>('/api/create', {
      query: { username: options.username, domain: options.domain },
      retryNetwork: false,
    });
    return this.known(created);
  }

  /** Redeems a Premium license key into the session. */
  async redeem(key: string): Promise<{ premium: true; premium_until: string; limits: Limits }> {
    const { premium, premium_until, limits } = await this.transport.json<RedeemResponse>('/api/premium/redeem', { method: 'POST', body: { key } });
    return { premium, premium_until, limits };
  }

  /** The active inboxes of the session, newest first; each handle sees every message. */
  async inboxes(): Promise<CreatedInbox[]> {
    const session = await this.transport.json<SessionResponse>('/api/session');
    return session.inboxes.map((inbox) => this.known(inbox));
  }

  /** A handle on an inbox the server just described (create or session): its expiry is known. */
  private known(inbox: { email: string; username: string; domain: string; expires_at: string }): CreatedInbox {
    const handle = new Inbox(this.transport, { address: inbox.email, username: inbox.username, domain: inbox.domain, expiresAt: new Date(inbox.expires_at) });
    if (!hasExpiry(handle)) throw new TempInboxError(200, 'invalid_response', `The server gave no expiry for ${inbox.email}.`);
    return handle;
  }

  /**
   * A handle on an existing inbox of the session, by username or address; asks nothing. It
   * sees every message, or with `after` only those received after that message. `returned`
   * resumes the ids earlier waits returned (`inbox.returned` of an earlier handle).
   */
  inbox(nameOrAddress: string, options: { after?: string; returned?: Iterable<string> } = {}): Inbox {
    const at = nameOrAddress.lastIndexOf('@');
    const username = at === -1 ? nameOrAddress : nameOrAddress.slice(0, at);
    const domain = at === -1 ? undefined : nameOrAddress.slice(at + 1);
    return new Inbox(this.transport, { address: nameOrAddress, username, domain, after: options.after, returned: options.returned });
  }
}
