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
    await trx.deleteFrom('message_insights').where('content_id', 'in', orphans.map((row) => row.id)).execute();
    await trx.deleteFrom('contents').where('id', 'in', orphans.map((row) => row.id)).execute();
  }
}

/**
 * Deletes inboxes with all their messages and the contents no other inbox still holds.
 * Already-deleted ids are ignored, so concurrent sweeps are harmless. Returns what went.
 * The inboxes' usage counters go with their rows: nothing to update (inbox-usage.ts). On
 * PostgreSQL the caller holds the inbox rows (FOR UPDATE) before this deletes their messages.
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
    // The inbox's webhook, what it still owes and its attempts go with it (migration 0007-webhooks).
    for (const table of ['webhook_deliveries', 'webhook_attempts', 'webhooks'] as const) await trx.deleteFrom(table).where('inbox_id', 'in', ids).execute();
    const result = await trx.deleteFrom('inboxes').where('id', 'in', ids).executeTakeFirst();
    inboxes += Number(result.numDeletedRows);
  }
  return { inboxes, messages };
}

/**
 * Messages deleted in one transaction at most. A sweep batch of 500 inboxes can hold tens of
 * thousands of messages; deleting them in one transaction held SQLite's one connection (then
 * on the event loop) for 80–140 ms per 5,000 messages, and polls queued behind it for up to
 * 700 ms. ~1,000 messages keep each step near 20 ms, so deliveries waiting for the writer
 * thread are not held long either.
 */
export const SWEEP_MESSAGES_PER_TRANSACTION = 1000;

/** The longest prefix of `ids` whose messages add up to at most `cap`; never empty when `ids` is not. */
export function prefixWithin(ids: readonly string[], counts: ReadonlyMap<string, number>, cap: number): string[] {
  const taken: string[] = [];
  let messages = 0;
  for (const id of ids) {
    const count = counts.get(id) ?? 0;
    if (taken.length > 0 && messages + count > cap) break;
    taken.push(id);
    messages += count;
  }
  return taken;
}

/**
 * One bounded sweep batch: up to `limit` inboxes expired at `now` (epoch ms) with their mail,
 * then up to `limit` expired sessions. The inboxes go in short transactions of at most
 * SWEEP_MESSAGES_PER_TRANSACTION messages, with a turn of the event loop between them so
 * requests and deliveries interleave. Each transaction picks its own expired inboxes; on
 * PostgreSQL, SKIP LOCKED lets several sweepers (nodes) take disjoint rows instead of
 * queueing on the same ones.
 */
export async function deleteExpiredBatch(db: Kysely<Database>, dialect: SqlDialect, now: number, limit: number): Promise<SweepCounts> {
  const batch = Math.max(0, Math.floor(limit));
  if (batch === 0) return { inboxes: 0, messages: 0, sessions: 0 };
  let inboxes = 0;
  let messages = 0;
  // How many inboxes to look at per transaction: adapts to how many the message cap let through.
  let window = batch;
  for (let step = 0; inboxes < batch; step += 1) {
    if (step > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    const wanted = Math.min(window, batch - inboxes);
    const result = await db.transaction().execute(async (trx) => {
      const expired = await trx
        .selectFrom('inboxes')
        .select(['id', 'message_count'])
        .where('expires_at', '<=', now)
        .orderBy('expires_at')
        .limit(wanted)
        .$if(dialect.rowLocks, (q) => q.forUpdate().skipLocked())
        .execute();
      const ids = expired.map((row) => row.id);
      // How many messages each holds: its stored counter (inbox-usage.ts), read with the row.
      const counts = new Map(expired.map((row) => [row.id, Number(row.message_count)]));
      const taken = prefixWithin(ids, counts, SWEEP_MESSAGES_PER_TRANSACTION);
      return { found: ids.length, taken: taken.length, ...(await deleteInboxesWithMessages(trx, dialect, taken)) };
    });
    inboxes += result.inboxes;
    messages += result.messages;
    // Done when nothing was deleted, or when every expired inbox there was fitted in this step.
    if (result.inboxes === 0 || (result.found < wanted && result.taken === result.found)) break;
    window = Math.max(1, result.inboxes * 2);
  }
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
