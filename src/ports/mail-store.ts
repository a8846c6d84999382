import type {
  AttachmentContent,
  Inbox,
  InboxWithCount,
  License,
  LicenseUsage,
  MessageDetail,
  MessageView,
  NewMessage,
  Owner,
  Session,
  SweepCounts,
} from '../domain/types.js';

/** Which part of an inbox listMessagePage reads. */
export interface MessagePageQuery {
  /** Only messages received after this one; an id that is not a message of the inbox is ignored. */
  sinceId?: string;
  /** Only messages received before this one; an id that is not a message of the inbox gives no messages and `beforeFound: false`. */
  beforeId?: string;
  /** Most messages read. */
  limit: number;
  /** `text` and `html` are cut to this many bytes of UTF-8 (whole characters); cut messages are `truncated`. */
  maxFieldBytes: number;
}

/** A page read by listMessagePage, newest first. */
export interface MessagePage {
  messages: MessageView[];
  /** False when `beforeId` was given and is not a message of the inbox. */
  beforeFound: boolean;
}

/** Result of inserting an inbox: a name clash with another stored, unexpired inbox is `taken`. */
export type InsertInboxResult = 'created' | 'taken';

/**
 * Everything the services persist. One contract suite (test/contract/mail-store-contract.ts)
 * runs against every implementation: the in-memory fake and the SQL store (SQLite, PostgreSQL).
 *
 * Conventions:
 * - Dates in, Dates out; ids are made by the caller (domain/ids.ts), never by the store.
 * - Methods that read "active" data take `now`; the store never reads a clock.
 * - A failure of the backend itself is thrown as StoreUnavailableError.
 */
export interface MailStore {
  /** Applies pending migrations (idempotent, safe to call at every start). */
  migrate(): Promise<void>;
  /** Resolves when the backend answers a trivial query. */
  ping(): Promise<void>;
  /** Releases connections; the store is unusable afterwards. */
  close(): Promise<void>;

  // --- sessions ---------------------------------------------------------------------------
  insertSession(session: Session): Promise<void>;
  /** The session whose token hash matches and whose expires_at is after `now`, else null. */
  findSession(tokenHash: string, now: Date): Promise<Session | null>;
  /** Extends a session's cookie lifetime. */
  renewSession(sessionId: string, expiresAt: Date): Promise<void>;
  /** Records that the session redeemed the license. */
  setSessionLicense(sessionId: string, licenseId: string): Promise<void>;
  /** How many unexpired sessions have redeemed the license. */
  countLicenseSessions(licenseId: string, now: Date): Promise<number>;

  // --- licenses ---------------------------------------------------------------------------
  insertLicenses(licenses: License[]): Promise<void>;
  findLicenseByKeyHash(keyHash: string): Promise<License | null>;
  findLicenseById(licenseId: string): Promise<License | null>;
  /** Every license, oldest first, with its usage at `now`. */
  listLicenses(now: Date): Promise<LicenseUsage[]>;
  /** Marks a license revoked; false when no license has that key hash. */
  revokeLicense(keyHash: string, at: Date): Promise<boolean>;

  // --- inboxes ----------------------------------------------------------------------------
  /**
   * Stores a new inbox. In the same transaction, an expired inbox holding the same username
   * is deleted with its messages first (a later holder never sees an earlier holder's mail).
   * Returns `taken` when an unexpired inbox holds the username.
   */
  insertInbox(inbox: Inbox, now: Date): Promise<InsertInboxResult>;
  /** The stored inbox with this username (active or expired but not yet swept), else null. */
  findInboxByUsername(username: string): Promise<Inbox | null>;
  findInboxById(inboxId: string): Promise<Inbox | null>;
  /**
   * Active inboxes the owner may read: session_id = owner.sessionId, or license_id =
   * owner.licenseId when that is not null. Newest first, with message counts.
   */
  listActiveInboxes(owner: Owner, now: Date): Promise<InboxWithCount[]>;
  /** Number of active inboxes owned by the license. */
  countActiveLicenseInboxes(licenseId: string, now: Date): Promise<number>;
  /** Gives an inbox to a license with a new expiry (redeem adopts the free inbox). */
  adoptInbox(inboxId: string, licenseId: string, expiresAt: Date): Promise<void>;
  /** Deletes an inbox and all its messages; false when it did not exist. */
  deleteInbox(inboxId: string): Promise<boolean>;

  // --- messages ---------------------------------------------------------------------------
  /** Messages an inbox holds now. */
  countMessages(inboxId: string): Promise<number>;
  /**
   * Stores one received message for each of the inboxes, atomically: when the promise
   * resolves, the message is durable. Inboxes that no longer exist are skipped.
   * Returns the new message id per inbox that got the message.
   */
  insertMessage(message: NewMessage, inboxIds: string[]): Promise<Map<string, string>>;
  /**
   * Messages of an inbox, newest first. With `sinceId`, only messages received after that
   * message; an id that is not a message of this inbox is ignored (all messages returned).
   */
  listMessages(inboxId: string, options?: { sinceId?: string; limit?: number }): Promise<MessageView[]>;
  /**
   * A bounded page of an inbox, newest first, for listings: at most `limit` messages, each
   * body cut to `maxFieldBytes` by the backend, so a page never reads whole large bodies.
   */
  listMessagePage(inboxId: string, query: MessagePageQuery): Promise<MessagePage>;
  /**
   * Deletes the oldest messages of an inbox beyond its newest `keep`, at most `maxDeleted` in
   * one call (one bounded statement). Returns how many it deleted.
   */
  trimMessages(inboxId: string, keep: number, maxDeleted: number): Promise<number>;
  findMessage(messageId: string): Promise<MessageDetail | null>;
  /** The original bytes of a message and the inbox that holds it. */
  findRawMessage(messageId: string): Promise<{ inboxId: string; raw: Uint8Array } | null>;
  findAttachment(messageId: string, attachmentId: string): Promise<AttachmentContent | null>;
  /** Deletes one message; false when it did not exist. */
  deleteMessage(messageId: string): Promise<boolean>;

  // --- expiry -----------------------------------------------------------------------------
  /**
   * One bounded batch of the sweeper: deletes up to `limit` inboxes expired at `now` with
   * their messages and attachments, and up to `limit` sessions expired at `now`. Safe to run
   * concurrently from several processes. Returns what it deleted.
   */
  deleteExpired(now: Date, limit: number): Promise<SweepCounts>;
}

/** Thrown by a store when the backend cannot be reached or fails (HTTP 503, SMTP 451). */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}
