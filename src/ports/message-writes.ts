import type { NewMessage } from '../domain/types.js';

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

/** Messages stored and deleted (DeliveryService, MessageService). */
export interface MessageWrites {
  /**
   * Stores one received message for each of the inboxes, atomically: when the promise
   * resolves, the message is durable. Each inbox is decided inside the same transaction that
   * writes (its row locked on PostgreSQL): missing, expired at `policy.now`, or full when one
   * more message of this size would pass its quota, so concurrent deliveries never push an
   * inbox past it. Returns one outcome per distinct inbox id given.
   */
  insertMessage(message: NewMessage, inboxIds: string[], policy: StorePolicy): Promise<Map<string, InsertOutcome>>;
  /**
   * Deletes the oldest messages of an inbox beyond its newest `keep`, at most `maxDeleted` in
   * one call (one bounded statement). Returns how many it deleted.
   */
  trimMessages(inboxId: string, keep: number, maxDeleted: number): Promise<number>;
  /** Deletes one message; false when it did not exist. */
  deleteMessage(messageId: string): Promise<boolean>;
}
