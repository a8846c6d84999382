import type { NewMessage } from '../../domain/types.js';
import type { InsertOutcome, StorePolicy } from '../../ports/mail-store.js';

/** Rows per multi-row INSERT: 100 rows × ≤ 8 columns stays far below every bind limit. */
export const INSERT_ROWS_PER_STATEMENT = 100;

/** What became of a message per inbox, in the order the inboxes were given. */
export type DeliveryOutcomes = Map<string, InsertOutcome>;

/**
 * One message of a delivery group: the message, the inboxes it goes to and their rules. A
 * group is written in one transaction by the store's group writer (SQLite: sqlite-delivery.ts
 * on the writer thread; PostgreSQL: postgres-delivery.ts), which stores the content once and
 * one copy per inbox that is still there, active and under its quota, each delivery counting
 * the copies the ones before it wrote; the contract suite holds both writers to these rules.
 */
export interface MessageDelivery {
  message: NewMessage;
  inboxIds: readonly string[];
  policy: StorePolicy;
}
