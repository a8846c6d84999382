import type { Inbox, InboxWithCount, Owner } from '../domain/types.js';

/** Result of inserting an inbox: a name clash with another stored, unexpired inbox is `taken`. */
export type InsertInboxResult = 'created' | 'taken';

/** Result of insertLicenseInbox: `limit_reached` when the license already has its maximum of active inboxes. */
export type InsertLicenseInboxResult = InsertInboxResult | 'limit_reached';

/** Result of getOrCreateFreeInbox: the owner's newest active inbox, or `inbox` when it had none. */
export type FreeInboxResult = { status: 'existing' | 'created'; inbox: Inbox } | { status: 'taken' };

/** Messages and raw bytes an inbox holds. */
export interface InboxUsage {
  messages: number;
  bytes: number;
}

/** Inboxes: created, found, listed, discarded (InboxService, DeliveryService's RCPT TO). */
export interface InboxStore {
  /**
   * Stores a new inbox. In the same transaction, an expired inbox holding the same username
   * is deleted with its messages first (a later holder never sees an earlier holder's mail).
   * Returns `taken` when an unexpired inbox holds the username.
   */
  insertInbox(inbox: Inbox, now: Date): Promise<InsertInboxResult>;
  /** The stored inbox with this username (active or expired but not yet swept), else null. */
  findInboxByUsername(username: string): Promise<Inbox | null>;
  /**
   * findInboxByUsername with the messages and raw bytes the inbox holds, in the same read: the
   * RCPT TO check. Costs the same whatever the inbox holds: the usage is stored with the inbox
   * and kept exact by every write that adds or removes a copy, never counted.
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
}
