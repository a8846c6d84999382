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

/**
 * Filters of a listing, each a case-insensitive substring, all of them ANDed (docs/api.md,
 * check): `to` of the copy's recipient address, `from` of the From header or the envelope
 * sender, `subject` of the subject. Empty or absent: no filter. A filter matches when its
 * fold is a substring of the field's stored match key (domain/match-key.ts), on every backend.
 */
export interface MessageFilter {
  to?: string;
  from?: string;
  subject?: string;
}

/** Whether any filter of a listing is set (an empty string filters nothing). */
export function hasFilter(filter: MessageFilter | undefined): boolean {
  return filter !== undefined && [filter.to, filter.from, filter.subject].some((value) => value !== undefined && value !== '');
}

/** Which part of an inbox listMessagePage reads. */
export interface MessagePageQuery {
  /** Only messages received after this one; an id that is not a message of the inbox is ignored. */
  sinceId?: string;
  /** Only messages received before this one; an id that is not a message of the inbox gives no messages and `beforeFound: false`. */
  beforeId?: string;
  /**
   * Only messages received after this one, which must be a message of the inbox: a held
   * wait's cursor, what it has looked at already (services/mail-wait.ts). An id that is not a
   * message of the inbox gives no messages and `afterFound: false`. Combinable with `sinceId`.
   */
  afterId?: string;
  /** Most messages read. */
  limit: number;
  /** `text` and `html` are cut to this many bytes of UTF-8 (whole characters); cut messages are `truncated`. */
  maxFieldBytes: number;
  /** Only messages matching it, filtered by the backend's query (the limit counts matches). */
  filter?: MessageFilter;
  /** Oldest first: the first `limit` messages after `sinceId` (event streams read forward). Default newest first. */
  oldestFirst?: boolean;
}

/** A page read by listMessagePage, newest first (oldest first with `oldestFirst`). */
export interface MessagePage {
  messages: MessageView[];
  /** False when `beforeId` was given and is not a message of the inbox. */
  beforeFound: boolean;
  /** Only with `afterId`: false when it is not a message of the inbox. */
  afterFound?: boolean;
}

/**
 * What a check's validator and its `since` shortcut need, read from the (inbox_id, seq) index
 * alone: no message row, no body (docs/api.md, check: "ETag").
 */
export interface InboxMark {
  /** Messages the inbox holds. */
  count: number;
  /**
   * Changes whenever a message is stored in or deleted from the inbox, and does not come back
   * to an earlier value: which messages it holds, as the store can tell from its index.
   */
  version: string;
  /** `sinceId` is a message of the inbox and none is newer than it: a `since` poll finds nothing. */
  nothingSince: boolean;
}

/** Which ids of an inbox listMessageIds reads: listMessagePage's query, newest first, without bodies. */
export type MessageIdQuery = Omit<MessagePageQuery, 'maxFieldBytes' | 'oldestFirst'>;

/** Ids read by listMessageIds, newest first. */
export interface MessageIdPage {
  ids: string[];
  /** False when `beforeId` was given and is not a message of the inbox. */
  beforeFound: boolean;
  /** Only with `afterId`: false when it is not a message of the inbox. */
  afterFound?: boolean;
}

/** What pollInbox reads: a poll's session, inbox and mark (docs/architecture.md "One statement per poll"). */
export interface PollQuery {
  /** The hash of the caller's session cookie (findSession). */
  tokenHash: string;
  /** The inbox's username; '' reads the session alone. */
  username: string;
  /** The session and the inbox must be unexpired at this instant for the session and the mark to be read. */
  now: Date;
  /** markInbox's `sinceId`, and the lower bound of the ids. */
  sinceId?: string;
  /** Also read the ids listMessageIds(inbox, { sinceId, limit: idLimit }) answers; 0 or absent: none. */
  idLimit?: number;
}

/**
 * What pollInbox read, as the separate reads answer: the mark no later than the ids, so an
 * ETag made from it is never newer than a listing made from the ids (one snapshot when it is
 * one statement, as on PostgreSQL).
 */
export interface InboxPoll {
  /** findSession(tokenHash, now). */
  session: Session | null;
  /**
   * The inbox with this username when `session` may read it (its creator, or a session of the
   * license that owns it), active or expired; null when there is none, it is another owner's,
   * or there is no session.
   */
  inbox: Inbox | null;
  /** markInbox(inbox.id, sinceId) when `inbox` is active at `now`, else null. */
  mark: InboxMark | null;
  /** listMessageIds(inbox.id, { sinceId, limit: idLimit }).ids when `mark` was read and `idLimit` > 0, else null. */
  ids: string[] | null;
}

/** Result of inserting an inbox: a name clash with another stored, unexpired inbox is `taken`. */
export type InsertInboxResult = 'created' | 'taken';

/** Result of insertLicenseInbox: `limit_reached` when the license already has its maximum of active inboxes. */
export type InsertLicenseInboxResult = InsertInboxResult | 'limit_reached';

/** Result of getOrCreateFreeInbox: the owner's newest active inbox, or `inbox` when it had none. */
export type FreeInboxResult = { status: 'existing' | 'created'; inbox: Inbox } | { status: 'taken' };

/** What redeemLicense did: set the license on the session, found it already set, or refused it. */
export type RedeemStatus = 'redeemed' | 'already_redeemed' | 'session_limit' | 'no_license';

/** The limits redeemLicense applies while it counts. */
export interface RedeemRules {
  /** Most active inboxes of the license; adoption stops there. */
  maxInboxes: number;
  /** An adopted inbox expires at its created_at plus this. */
  premiumTtlMs: number;
}

/** Most a single inbox holds: checked when a message is stored (docs/api.md "Fair use and limits"). */
export interface InboxQuota {
  maxMessages: number;
  /** Sum of the raw sizes of the messages it holds. */
  maxBytes: number;
}

/** The rules insertMessage applies to each inbox inside its transaction. */
export interface StorePolicy {
  /** Only an inbox active at `now` (now < expires_at) gets the message. */
  now: Date;
  /** Quota of an inbox no license owns. */
  free: InboxQuota;
  /** Quota of an inbox a license owns. */
  premium: InboxQuota;
  /** Inboxes without a quota (the postmaster inbox, which is trimmed instead). */
  unlimited?: readonly string[];
}

/** What became of the message in one inbox: stored, or refused and why. */
export type InsertOutcome =
  | { status: 'stored'; messageId: string }
  /** Storing it would pass the inbox's message or byte quota. */
  | { status: 'full' }
  /** The inbox expired before the message could be stored. */
  | { status: 'expired' }
  /** No such inbox (deleted or swept). */
  | { status: 'missing' };

/** Messages and raw bytes an inbox holds. */
export interface InboxUsage {
  messages: number;
  bytes: number;
}

/** Which inboxes recountUsage reads: the first `limit` after `afterId`, in the store's order of inbox ids. */
export interface RecountQuery {
  /** Only inboxes after this id (the previous batch's `lastId`); absent: from the first. */
  afterId?: string;
  /** Most inboxes in the batch. */
  limit: number;
}

/** What one recountUsage batch did. */
export interface RecountResult {
  /** Inboxes in the batch. */
  checked: number;
  /** Of those, inboxes whose stored usage differed from what they hold, now set right. */
  corrected: number;
  /** The batch's last inbox id, the next batch's `afterId`; undefined when the batch was empty. */
  lastId: string | undefined;
}

/**
 * Everything the services persist. One contract suite (test/contract/mail-store-contract.ts)
 * runs against every implementation: the in-memory fake and the SQL store (SQLite, PostgreSQL).
 *
 * Conventions:
 * - Dates in, Dates out; ids are made by the caller (domain/ids.ts), never by the store.
 * - Methods that read "active" data take `now`; the store never reads a clock.
 * - A failure of the backend itself is thrown by cause (docs/api.md "Errors"): the database
 *   cannot be reached → StoreUnavailableError; its disk is full → StoreFullError; anything
 *   else (a SQL bug, a constraint nobody expected) → StoreFailureError.
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
  /**
   * Stores a new session and its first inbox in one transaction (insertInbox's rules for the
   * inbox). `taken` stores neither: the caller tries again with another name.
   */
  insertSessionWithInbox(session: Session, inbox: Inbox, now: Date): Promise<InsertInboxResult>;
  /** Extends a session's cookie lifetime. */
  renewSession(sessionId: string, expiresAt: Date): Promise<void>;
  /**
   * Redeems a license for a session in one transaction that counts and writes (the license
   * row locked on PostgreSQL): unless the session already holds it, refuses with
   * `session_limit` when `max_sessions` unexpired sessions hold it, else sets it on the
   * session. Then adopts the session's active free inboxes while the license has fewer than
   * `rules.maxInboxes` active ones. `no_license` when the license or session does not exist.
   */
  redeemLicense(sessionId: string, licenseId: string, now: Date, rules: RedeemRules): Promise<RedeemStatus>;

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
  /**
   * findInboxByUsername with the inbox's usage (inboxUsage) in the same read: the RCPT TO
   * check. Costs the same whatever the inbox holds (the usage is stored, not counted).
   */
  findInboxWithUsage(username: string): Promise<{ inbox: Inbox; usage: InboxUsage } | null>;
  findInboxById(inboxId: string): Promise<Inbox | null>;
  /**
   * Active inboxes the owner may read: session_id = owner.sessionId, or license_id =
   * owner.licenseId when that is not null. Newest first, with message counts.
   */
  listActiveInboxes(owner: Owner, now: Date): Promise<InboxWithCount[]>;
  /**
   * Get-or-create of a free session's inbox, in one transaction (the session row locked on
   * PostgreSQL): the newest active inbox `owner` can read, or else `inbox` inserted as by
   * insertInbox. Concurrent calls for one session all answer the same inbox.
   */
  getOrCreateFreeInbox(inbox: Inbox, owner: Owner, now: Date): Promise<FreeInboxResult>;
  /**
   * insertInbox for an inbox of license `inbox.licenseId`, counting the license's active
   * inboxes in the same transaction (the license row locked on PostgreSQL): `limit_reached`
   * when it already has `maxInboxes`, so concurrent creates never pass the maximum.
   */
  insertLicenseInbox(inbox: Inbox & { licenseId: string }, now: Date, maxInboxes: number): Promise<InsertLicenseInboxResult>;
  /** Deletes an inbox and all its messages; false when it did not exist. */
  deleteInbox(inboxId: string): Promise<boolean>;

  // --- messages ---------------------------------------------------------------------------
  /** Messages an inbox holds now. */
  countMessages(inboxId: string): Promise<number>;
  /**
   * Messages and raw bytes an inbox holds now (absent inbox: none). Stored with the inbox and
   * kept exact by every write that adds or removes a copy, so it never counts the messages.
   */
  inboxUsage(inboxId: string): Promise<InboxUsage>;
  /**
   * Sets the stored usage (inboxUsage) of one batch of inboxes to what each holds, counted from
   * its copies, in one transaction: the repair after nodes of a release before the counters
   * wrote on the migrated schema (docs/scaling.md "Migrations"). Safe while other nodes deliver
   * and delete: on PostgreSQL the batch's inbox rows are locked first, in id order as every
   * writer locks them, so a write to one of them commits before the count or waits for the
   * repair's commit. Batches follow each other by `lastId`; a batch shorter than `limit` was
   * the last.
   */
  recountUsage(query: RecountQuery): Promise<RecountResult>;
  /**
   * Stores one received message for each of the inboxes, atomically: when the promise
   * resolves, the message is durable. Each inbox is decided inside the same transaction that
   * writes (its row locked on PostgreSQL): missing, expired at `policy.now`, or full when one
   * more message of this size would pass its quota, so concurrent deliveries never push an
   * inbox past it. Returns one outcome per distinct inbox id given.
   */
  insertMessage(message: NewMessage, inboxIds: string[], policy: StorePolicy): Promise<Map<string, InsertOutcome>>;
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
  /** The inbox's message count and version, and whether `sinceId` is its newest message (InboxMark). */
  markInbox(inboxId: string, sinceId?: string): Promise<InboxMark>;
  /**
   * A poll's reads in one operation (one statement on SQL): findSession, the inbox by username
   * when the session may read it, and for an active one markInbox and the first ids. Nothing
   * about an inbox the session may not read leaves the store.
   */
  pollInbox(query: PollQuery): Promise<InboxPoll>;
  /**
   * The ids of the page listMessagePage would read (newest first, same `sinceId`, `beforeId`,
   * `limit` and `filter`), without reading a body.
   */
  listMessageIds(inboxId: string, query: MessageIdQuery): Promise<MessageIdPage>;
  /**
   * The messages of the inbox with these ids, as listMessagePage shows them (bodies cut to
   * `maxFieldBytes`), in any order; ids that are not (or no longer) messages of the inbox are
   * left out. Callers pass a few ids at a time (CHECK_READ_BATCH): each is a body read.
   */
  findListedMessages(inboxId: string, ids: readonly string[], maxFieldBytes: number): Promise<MessageView[]>;
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

/** Thrown by a store when the database cannot be reached (HTTP 503, SMTP 451 4.3.0): retry later. */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/** Thrown by a store when the database's disk is full (HTTP 507, SMTP 452 4.3.1): retry once space returns. */
export class StoreFullError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreFullError';
  }
}

/**
 * Thrown by a store for any other backend failure: a bug of ours (HTTP 500 internal_error,
 * logged with its cause; SMTP 451 4.3.0), never reported as an outage.
 */
export class StoreFailureError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreFailureError';
  }
}
