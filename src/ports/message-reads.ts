import type { AttachmentContent, Inbox, MessageDetail, MessageView, Session } from '../domain/types.js';

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

/** Which part of an inbox readPage reads, and how much of it at most. */
export interface PageQuery {
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
  /**
   * Most bytes of the page as `listing.bytes` counts them: messages are added in order until
   * the next one would pass it (the first always goes in), and no body past it is read.
   * Absent: no byte budget.
   */
  maxBytes?: number;
  /**
   * The page's ids when they were read already, newest first (InboxPoll.ids: `limit` + 1
   * after `sinceId`); only for a page without `beforeId`, `afterId`, filter or `oldestFirst`.
   * The store then reads only the bodies.
   */
  ids?: readonly string[];
}

/**
 * What the caller makes of each listed message, and what it kept of messages it listed before
 * (a stored message never changes and its id is never reused): the transport's serialised
 * listing, so that a message is serialised once and a kept one costs no body read
 * (docs/architecture.md "Serialise once"). VIEWS takes the messages as they are.
 */
export interface PageListing<T> {
  /** The caller's item of a message it has kept, if any: its body is not read. */
  held(messageId: string): T | undefined;
  /** The caller's item of a message read from the store. */
  take(message: MessageView): T;
  /** Bytes an item takes in the answer, separator included (PageQuery.maxBytes counts these). */
  bytes(item: T): number;
}

/** The messages as read, no byte budget: a page whose `limit` alone bounds it. */
export const VIEWS: PageListing<MessageView> = { held: () => undefined, take: (message) => message, bytes: () => 0 };

/**
 * The ids alone: every message counts as held, so no body is read and the page costs one read
 * of the index (the newest id of an inbox, whether anything is new since a message).
 */
export const IDS: PageListing<string> = { held: (messageId) => messageId, take: (message) => message.id, bytes: () => 0 };

/** A page read by readPage, newest first (oldest first with `oldestFirst`). */
export interface MessagePage<T = MessageView> {
  messages: T[];
  /** Messages beyond the page were left out by `limit` or `maxBytes` (or may exist: one was deleted while the page was read). */
  hasMore: boolean;
  /** False when `beforeId` was given and is not a message of the inbox (no messages then). */
  beforeFound: boolean;
  /** Only with `afterId`: false when it is not a message of the inbox (no messages then). */
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
  /** Also read the first ids of the page after `sinceId`, newest first, at most this many; 0 or absent: none. */
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
  /** The first `idLimit` ids after `sinceId` (PageQuery.ids) when `mark` was read and `idLimit` > 0, else null. */
  ids: string[] | null;
}

/** Messages read: the one page read of an inbox, its mark, a poll's reads, and one message whole (checks, waits, streams, MessageService). */
export interface MessageReads {
  /**
   * The one bounded page read of an inbox: at most `limit` messages in `since`, `before`,
   * `after` and `filter`, bodies cut to `maxFieldBytes` by the backend, within `maxBytes` as
   * `listing` counts, read a few bodies at a time (a turn of the event loop between reads) and
   * none for a message `listing` holds, so a page never reads whole large bodies nor more than
   * it answers.
   */
  readPage<T>(inboxId: string, query: PageQuery, listing: PageListing<T>): Promise<MessagePage<T>>;
  /** The inbox's mark (InboxMark), and whether `sinceId` is its newest message. */
  markInbox(inboxId: string, sinceId?: string): Promise<InboxMark>;
  /**
   * A poll's reads in one operation (one statement on PostgreSQL): findSession, the inbox by
   * username when the session may read it, and for an active one markInbox and the first ids.
   * Nothing about an inbox the session may not read leaves the store.
   */
  pollInbox(query: PollQuery): Promise<InboxPoll>;
  findMessage(messageId: string): Promise<MessageDetail | null>;
  /** The original bytes of a message and the inbox that holds it. */
  findRawMessage(messageId: string): Promise<{ inboxId: string; raw: Uint8Array } | null>;
  findAttachment(messageId: string, attachmentId: string): Promise<AttachmentContent | null>;
}
