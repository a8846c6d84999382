import type { SweepCounts } from '../domain/types.js';

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

/** The store's life and its housekeeping (app.ts, the sweeper, the CLI). */
export interface StoreMaintenance {
  /** Applies pending migrations (idempotent, safe to call at every start). */
  migrate(): Promise<void>;
  /** Resolves when the backend answers a trivial query. */
  ping(): Promise<void>;
  /** Releases connections; the store is unusable afterwards. */
  close(): Promise<void>;
  /**
   * One bounded batch of the sweeper: deletes up to `limit` inboxes expired at `now` with
   * their messages and attachments, and up to `limit` sessions expired at `now`. Safe to run
   * concurrently from several processes. Returns what it deleted.
   */
  deleteExpired(now: Date, limit: number): Promise<SweepCounts>;
  /**
   * Sets the stored usage (InboxStore.findInboxWithUsage) of one batch of inboxes to what each
   * holds, counted from its copies, in one transaction: the repair after nodes of a release
   * before the counters wrote on the migrated schema (docs/scaling.md "Migrations"). Safe
   * while other nodes deliver and delete: on PostgreSQL the batch's inbox rows are locked
   * first, in id order as every writer locks them, so a write to one of them commits before
   * the count or waits for the repair's commit. Batches follow each other by `lastId`; a batch
   * shorter than `limit` was the last.
   */
  recountUsage(query: RecountQuery): Promise<RecountResult>;
}
