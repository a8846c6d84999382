import { sql, type ExpressionBuilder, type Kysely } from 'kysely';
import type { Database, DbCount } from './database.js';
import { chunks, MAX_IDS_PER_STATEMENT } from './deletions.js';
import type { SqlDialect } from './dialect.js';
import { toCount } from './row-mappers.js';

/**
 * The usage counters of the inbox rows (`message_count`, `byte_count`; docs/architecture.md
 * "Inbox usage counters"), kept by explicit updates in the transaction that adds or removes
 * copies. Every such transaction on PostgreSQL holds the inbox row (FOR NO KEY UPDATE or FOR
 * UPDATE) before it touches that inbox's messages, so the update takes no lock out of order:
 * inboxes, then messages, then contents, in every writer.
 */

/** Adds one copy of `size` raw bytes to each inbox's counters; the caller's transaction holds their rows. */
export async function addUsage(trx: Kysely<Database>, inboxIds: readonly string[], size: number): Promise<void> {
  for (const ids of chunks(inboxIds, MAX_IDS_PER_STATEMENT)) {
    await trx
      .updateTable('inboxes')
      .set({ message_count: sql<number>`message_count + 1`, byte_count: sql<number>`byte_count + ${size}` })
      .where('id', 'in', ids)
      .execute();
  }
}

/** One deleted copy as the deleting statement returns it (returningDeletedCopy). */
export interface DeletedCopy {
  inbox_id: string;
  content_id: string;
  /** Its content's size; null only if the content were gone already (it never is: contents go after their copies). */
  size: DbCount | null;
}

/**
 * What a DELETE FROM messages returns for releaseUsage: the copy's inbox and content, and the
 * content's size read in the same statement (a scalar subquery in RETURNING, which both
 * SQLite and PostgreSQL take; the content row is still there, orphans go afterwards).
 */
export function returningDeletedCopy(eb: ExpressionBuilder<Database, 'messages'>) {
  return [
    'messages.inbox_id',
    'messages.content_id',
    eb.selectFrom('contents').select('contents.size').whereRef('contents.id', '=', 'messages.content_id').as('size'),
  ] as const;
}

/**
 * Subtracts deleted copies from their inboxes' counters: one update per inbox, in id order.
 * Call in the transaction that deleted them, after locking the inbox rows (lockInboxFor).
 */
export async function releaseUsage(trx: Kysely<Database>, deleted: readonly DeletedCopy[]): Promise<void> {
  const perInbox = new Map<string, { messages: number; bytes: number }>();
  for (const copy of deleted) {
    const usage = perInbox.get(copy.inbox_id) ?? { messages: 0, bytes: 0 };
    usage.messages += 1;
    usage.bytes += toCount(copy.size);
    perInbox.set(copy.inbox_id, usage);
  }
  for (const [id, { messages, bytes }] of [...perInbox].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    await trx
      .updateTable('inboxes')
      .set({ message_count: sql<number>`message_count - ${messages}`, byte_count: sql<number>`byte_count - ${bytes}` })
      .where('id', '=', id)
      .execute();
  }
}

/**
 * PostgreSQL: locks the row of the inbox holding `messageId` (FOR NO KEY UPDATE, as a delivery
 * does) before the copy is deleted, so the lock order stays inboxes → messages. Deleting the
 * copy first and updating the counter after would lock the message, then the inbox, while a
 * sweep or deleteInbox holds the inbox and waits for the message: a deadlock. SQLite: nothing
 * (one writer).
 */
export async function lockInboxOfMessage(trx: Kysely<Database>, dialect: SqlDialect, messageId: string): Promise<void> {
  if (!dialect.rowLocks) return;
  await trx
    .selectFrom('inboxes as i')
    .innerJoin('messages as m', 'm.inbox_id', 'i.id')
    .select('i.id')
    .where('m.id', '=', messageId)
    .forNoKeyUpdate('i')
    .execute();
}

/** PostgreSQL: locks one inbox row (FOR NO KEY UPDATE) before its copies are deleted; see lockInboxOfMessage. */
export async function lockInbox(trx: Kysely<Database>, dialect: SqlDialect, inboxId: string): Promise<void> {
  if (!dialect.rowLocks) return;
  await trx.selectFrom('inboxes').select('id').where('id', '=', inboxId).forNoKeyUpdate().execute();
}
