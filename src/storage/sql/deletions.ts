import type { Kysely } from 'kysely';
import type { SweepCounts } from '../../domain/types.js';
import type { Database } from './database.js';
import type { SqlDialect } from './dialect.js';

/**
 * Most ids bound in one IN list: far below SQLite's 32766 and PostgreSQL's 65535 bind
 * parameters, and small enough that one statement never holds locks for long.
 */
export const MAX_IDS_PER_STATEMENT = 500;

/** Splits `items` into slices of at most `size`. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * Deletes the contents (and their attachments) among `contentIds` that no message refers to
 * any more. Call inside the transaction that deleted the messages. On PostgreSQL the content
 * rows are locked first, so two transactions deleting the last two copies of one message
 * cannot both see the other's copy and leave the content behind.
 */
export async function deleteOrphanContents(trx: Kysely<Database>, dialect: SqlDialect, contentIds: Iterable<string>): Promise<void> {
  // Sorted, so concurrent cleanups lock content rows in one global order (no deadlock).
  for (const ids of chunks([...new Set(contentIds)].sort(), MAX_IDS_PER_STATEMENT)) {
    if (dialect.rowLocks) {
      await trx.selectFrom('contents').select('id').where('id', 'in', ids).orderBy('id').forUpdate().execute();
    }
    const orphans = await trx
      .selectFrom('contents as c')
      .select(['c.id', 'c.attachment_count'])
      .where('c.id', 'in', ids)
      // Selecting the indexed column keeps the probe inside messages_content_id.
      .where((eb) => eb.not(eb.exists(eb.selectFrom('messages as m').select('m.content_id').whereRef('m.content_id', '=', 'c.id'))))
      .execute();
    if (orphans.length === 0) continue;
    const withAttachments = orphans.filter((row) => Number(row.attachment_count) > 0).map((row) => row.id);
    if (withAttachments.length > 0) await trx.deleteFrom('attachments').where('content_id', 'in', withAttachments).execute();
    await trx.deleteFrom('contents').where('id', 'in', orphans.map((row) => row.id)).execute();
  }
}

/**
 * Deletes inboxes with all their messages and the contents no other inbox still holds.
 * Already-deleted ids are ignored, so concurrent sweeps are harmless. Returns what went.
 */
export async function deleteInboxesWithMessages(
  trx: Kysely<Database>,
  dialect: SqlDialect,
  inboxIds: readonly string[],
): Promise<{ inboxes: number; messages: number }> {
  let inboxes = 0;
  let messages = 0;
  const contentIds = new Set<string>();
  for (const ids of chunks(inboxIds, MAX_IDS_PER_STATEMENT)) {
    const deleted = await trx.deleteFrom('messages').where('inbox_id', 'in', ids).returning('content_id').execute();
    messages += deleted.length;
    for (const row of deleted) contentIds.add(row.content_id);
  }
  await deleteOrphanContents(trx, dialect, contentIds);
  for (const ids of chunks(inboxIds, MAX_IDS_PER_STATEMENT)) {
    const result = await trx.deleteFrom('inboxes').where('id', 'in', ids).executeTakeFirst();
    inboxes += Number(result.numDeletedRows);
  }
  return { inboxes, messages };
}

/**
 * One bounded sweep batch: up to `limit` inboxes expired at `now` (epoch ms) with their mail,
 * then up to `limit` expired sessions. On PostgreSQL, SKIP LOCKED lets several sweepers
 * (nodes) take disjoint batches instead of queueing on the same rows.
 */
export async function deleteExpiredBatch(db: Kysely<Database>, dialect: SqlDialect, now: number, limit: number): Promise<SweepCounts> {
  const batch = Math.max(0, Math.floor(limit));
  if (batch === 0) return { inboxes: 0, messages: 0, sessions: 0 };
  const { inboxes, messages } = await db.transaction().execute(async (trx) => {
    const expired = await trx
      .selectFrom('inboxes')
      .select('id')
      .where('expires_at', '<=', now)
      .orderBy('expires_at')
      .limit(batch)
      .$if(dialect.rowLocks, (q) => q.forUpdate().skipLocked())
      .execute();
    return deleteInboxesWithMessages(trx, dialect, expired.map((row) => row.id));
  });
  const deleted = await db
    .deleteFrom('sessions')
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('sessions')
        .select('id')
        .where('expires_at', '<=', now)
        .orderBy('expires_at')
        .limit(batch)
        .$if(dialect.rowLocks, (q) => q.forUpdate().skipLocked()),
    )
    .executeTakeFirst();
  return { inboxes, messages, sessions: Number(deleted.numDeletedRows) };
}
