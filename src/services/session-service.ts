import type { Clock } from '../domain/clock.js';
import { hashSecret, newId, newSessionToken, SESSION_TOKEN_PATTERN } from '../domain/ids.js';
import type { Session } from '../domain/types.js';
import type { SessionStore } from '../ports/session-store.js';

/** A session cookie lives 30 days from its last use (docs/api.md "Session cookie"). */
export const SESSION_LIFETIME_SECONDS = 30 * 24 * 3600;
/**
 * Renewal is written to storage at most once an hour per session, so that polling every
 * second does not turn every read into a write.
 */
export const SESSION_RENEW_GRANULARITY_SECONDS = 3600;

/** A session together with the cookie value that proves it (only known at creation). */
export interface OpenedSession {
  session: Session;
  /** The cookie value to set; null when the caller already had it. */
  newToken: string | null;
}

/** Anonymous sessions: made by create/redeem, found by the hash of the cookie. */
export class SessionService {
  constructor(
    private readonly store: SessionStore,
    private readonly clock: Clock,
  ) {}

  /** The live session for a cookie value, renewed; null for none, junk, unknown or expired. */
  async resolve(token: string | undefined | null): Promise<Session | null> {
    const tokenHash = this.tokenHashOf(token);
    if (tokenHash === null) return null;
    const session = await this.store.findSession(tokenHash, this.clock.now());
    return session === null ? null : this.renew(session);
  }

  /** The hash a session is found by (SessionStore.findSession, MessageReads.pollInbox); null for junk that no session has. */
  tokenHashOf(token: string | undefined | null): string | null {
    return typeof token !== 'string' || !SESSION_TOKEN_PATTERN.test(token) ? null : hashSecret(token);
  }

  /**
   * A session just found by its token hash, renewed: its lifetime is extended, and written at
   * most once per SESSION_RENEW_GRANULARITY_SECONDS (resolve, and polls that read the session
   * with their inbox: InboxService.readPoll).
   */
  async renew(session: Session): Promise<Session> {
    const fresh = this.clock.now().getTime() + SESSION_LIFETIME_SECONDS * 1000;
    if (fresh - session.expiresAt.getTime() >= SESSION_RENEW_GRANULARITY_SECONDS * 1000) {
      session.expiresAt = new Date(fresh);
      await this.store.renewSession(session.id, session.expiresAt);
    }
    return session;
  }

  /** The caller's session, or a new one with a new cookie value when it has none. */
  async open(token: string | undefined | null): Promise<OpenedSession> {
    const existing = await this.resolve(token);
    return existing !== null ? { session: existing, newToken: null } : this.create();
  }

  /** A new session and the cookie value that proves it. */
  async create(): Promise<{ session: Session; newToken: string }> {
    const created = this.newSession();
    await this.store.insertSession(created.session);
    return created;
  }

  /**
   * A new session and its cookie value, not stored yet: InboxService.createWithSession stores
   * it together with its first inbox, in one transaction.
   */
  newSession(): { session: Session; newToken: string } {
    const newToken = newSessionToken();
    const now = this.clock.now();
    const session: Session = {
      id: newId(),
      tokenHash: hashSecret(newToken),
      createdAt: now,
      expiresAt: new Date(now.getTime() + SESSION_LIFETIME_SECONDS * 1000),
      licenseId: null,
    };
    return { session, newToken };
  }
}
