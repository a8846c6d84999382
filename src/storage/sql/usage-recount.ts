import type { Kysely } from 'kysely';
import type { RecountQuery, RecountResult } from '../../ports/mail-store.js';
import type { Database, DbCount } from './database.js';
import type { SqlDialect } from './dialect.js';
import { toCount } from './row-mappers.js';

/**
 * recountUsage of MailStore inside the caller's transaction: the inbox usage counters
 * (docs/architecture.md "Inbox usage counters") of one batch of inboxes set to a count of
 * their copies. Only the rows that differ are written.
 *
 * PostgreSQL: the batch's inbox rows are locked first (FOR NO KEY UPDATE, as a delivery locks
 * them), in one statement in id order, the order every writer that locks several inboxes uses;
 * this transaction touches no message or content row, so it never holds a lock a writer
 * further down the order (inboxes → messages → contents) could need first. Every writer that
 * adds or removes a copy holds its inbox row while it does (inbox-usage.ts), so a delivery or
 * delete of a batch inbox either committed before the lock was granted, and the count below
 * (READ COMMITTED: a fresh snapshot per statement) sees it, or waits for this commit and then
 * moves the corrected counters. The sweeper skips locked rows (SKIP LOCKED); an inbox it holds
 * is waited for and, once deleted, left out of the batch. SQLite: the transaction is the one
 * writer (BEGIN IMMEDIATE on its writer thread), so nothing writes in between either.
 */
export async function recountUsageIn(trx: Kysely<Database>, dialect: SqlDialect, query: RecountQuery): Promise<RecountResult> {
  const limit = Math.max(0, Math.floor(query.limit));
  if (limit === 0) return { checked: 0, corrected: 0, lastId: undefined };
  const { afterId } = query;
  // The lock sits below the LIMIT in PostgreSQL's plan: rows are locked as the primary-key
  // index returns them (id order), and a row deleted meanwhile is skipped, not counted.
  const inboxes = await trx
    .selectFrom('inboxes')
    .select(['id', 'message_count', 'byte_count'])
    .$if(afterId !== undefined, (q) => q.where('id', '>', afterId ?? ''))
    .orderBy('id')
    .limit(limit)
    .$if(dialect.rowLocks, (q) => q.forNoKeyUpdate())
    .execute();
  const first = inboxes[0];
  const last = inboxes.at(-1);
  if (first === undefined || last === undefined) return { checked: 0, corrected: 0, lastId: undefined };
  // The copies of the batch's id range, one range scan of messages_inbox_id_seq. An inbox
  // created meanwhile inside the range (PostgreSQL) may show up here; it is not in the batch,
  // and nothing is written for it.
  const counted = await trx
    .selectFrom('messages as m')
    .innerJoin('contents as c', 'c.id', 'm.content_id')
    .select((eb) => ['m.inbox_id', eb.fn.countAll<DbCount>().as('messages'), eb.fn.sum<DbCount>('c.size').as('bytes')])
    .where('m.inbox_id', '>=', first.id)
    .where('m.inbox_id', '<=', last.id)
    .groupBy('m.inbox_id')
    .execute();
  const actual = new Map(counted.map((row) => [row.inbox_id, { messages: toCount(row.messages), bytes: toCount(row.bytes) }]));
  let corrected = 0;
  for (const inbox of inboxes) {
    const { messages, bytes } = actual.get(inbox.id) ?? { messages: 0, bytes: 0 };
    if (toCount(inbox.message_count) === messages && toCount(inbox.byte_count) === bytes) continue;
    await trx.updateTable('inboxes').set({ message_count: messages, byte_count: bytes }).where('id', '=', inbox.id).execute();
    corrected += 1;
  }
  return { checked: inboxes.length, corrected, lastId: last.id };
}
