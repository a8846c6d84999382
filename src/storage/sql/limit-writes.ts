import type { Kysely } from 'kysely';
import type { Inbox, Owner } from '../../domain/types.js';
import type { FreeInboxResult, InboxUsage, InsertLicenseInboxResult, RedeemRules, RedeemStatus } from '../../ports/mail-store.js';
import type { Database, DbCount } from './database.js';
import { chunks, deleteInboxesWithMessages, MAX_IDS_PER_STATEMENT } from './deletions.js';
import type { SqlDialect } from './dialect.js';
import { toCount, toDate, toInbox, toMillis, toUsage } from './row-mappers.js';

/**
 * The limits of docs/api.md, each decided in the transaction that writes. On PostgreSQL the
 * row that owns the limit (session or license) is locked FOR UPDATE first, so a second
 * caller waits and then counts what the first committed (READ COMMITTED takes a fresh
 * snapshot per statement). SQLite admits one writer at a time (BEGIN IMMEDIATE, and Kysely
 * holds its one connection for the whole transaction), which serialises the same way.
 */

/**
 * Inserts an inbox inside the caller's transaction; an expired holder of the name is deleted
 * with its messages first. A live holder makes the insert throw the unique violation, which
 * aborts the transaction: callers map it to `taken` outside it.
 */
export async function insertInboxIn(trx: Kysely<Database>, dialect: SqlDialect, inbox: Inbox, now: Date): Promise<void> {
  const expired = await trx
    .selectFrom('inboxes')
    .select('id')
    .where('username', '=', inbox.username)
    .where('expires_at', '<=', toMillis(now))
    .$if(dialect.rowLocks, (q) => q.forUpdate())
    .execute();
  // A later holder of the name must never read the earlier holder's mail.
  if (expired.length > 0) await deleteInboxesWithMessages(trx, dialect, expired.map((row) => row.id));
  await trx
    .insertInto('inboxes')
    .values({
      id: inbox.id,
      username: inbox.username,
      domain: inbox.domain,
      created_at: toMillis(inbox.createdAt),
      expires_at: toMillis(inbox.expiresAt),
      session_id: inbox.sessionId,
      license_id: inbox.licenseId,
    })
    .execute();
}

/** getOrCreateFreeInbox of MailStore: the session row serialises its creates. */
export async function getOrCreateFreeInboxIn(
  trx: Kysely<Database>,
  dialect: SqlDialect,
  inbox: Inbox,
  owner: Owner,
  now: Date,
): Promise<FreeInboxResult> {
  if (dialect.rowLocks) await trx.selectFrom('sessions').select('id').where('id', '=', owner.sessionId).forUpdate().execute();
  const { sessionId, licenseId } = owner;
  const current = await trx
    .selectFrom('inboxes')
    .selectAll()
    .where((eb) =>
      licenseId === null ? eb('session_id', '=', sessionId) : eb.or([eb('session_id', '=', sessionId), eb('license_id', '=', licenseId)]),
    )
    .where('expires_at', '>', toMillis(now))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (current !== undefined) return { status: 'existing', inbox: toInbox(current) };
  await insertInboxIn(trx, dialect, inbox, now);
  return { status: 'created', inbox };
}

/** insertLicenseInbox of MailStore: the license row serialises its creates and adoptions. */
export async function insertLicenseInboxIn(
  trx: Kysely<Database>,
  dialect: SqlDialect,
  inbox: Inbox & { licenseId: string },
  now: Date,
  maxInboxes: number,
): Promise<InsertLicenseInboxResult> {
  if (dialect.rowLocks) await trx.selectFrom('licenses').select('id').where('id', '=', inbox.licenseId).forUpdate().execute();
  if ((await countActiveLicenseInboxes(trx, inbox.licenseId, now)) >= maxInboxes) return 'limit_reached';
  await insertInboxIn(trx, dialect, inbox, now);
  return 'created';
}

/** redeemLicense of MailStore: license row first, then the session's (one lock order for all callers). */
export async function redeemLicenseIn(
  trx: Kysely<Database>,
  dialect: SqlDialect,
  sessionId: string,
  licenseId: string,
  now: Date,
  rules: RedeemRules,
): Promise<RedeemStatus> {
  const license = await trx
    .selectFrom('licenses')
    .select('max_sessions')
    .where('id', '=', licenseId)
    .$if(dialect.rowLocks, (q) => q.forUpdate())
    .executeTakeFirst();
  const session = await trx
    .selectFrom('sessions')
    .select('license_id')
    .where('id', '=', sessionId)
    .$if(dialect.rowLocks, (q) => q.forUpdate())
    .executeTakeFirst();
  if (license === undefined || session === undefined) return 'no_license';
  const at = toMillis(now);

  let status: RedeemStatus = 'already_redeemed';
  if (session.license_id !== licenseId) {
    const row = await trx
      .selectFrom('sessions')
      .select((eb) => eb.fn.countAll<DbCount>().as('n'))
      .where('license_id', '=', licenseId)
      .where('expires_at', '>', at)
      .executeTakeFirst();
    if (toCount(row?.n) >= license.max_sessions) return 'session_limit';
    await trx.updateTable('sessions').set({ license_id: licenseId }).where('id', '=', sessionId).execute();
    status = 'redeemed';
  }

  // Adoption counts against the license's inbox maximum too, under the same license lock.
  const room = rules.maxInboxes - (await countActiveLicenseInboxes(trx, licenseId, now));
  if (room <= 0) return status;
  const free = await trx
    .selectFrom('inboxes')
    .select(['id', 'created_at'])
    .where('session_id', '=', sessionId)
    .where('license_id', 'is', null)
    .where('expires_at', '>', at)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(room)
    .execute();
  // PostgreSQL: their rows in id order before they are updated, the order deliveries and the
  // usage recount lock several inboxes in (docs/architecture.md "Inbox usage counters", lock
  // order); updating them newest first would lock them in another order, and a recount holding
  // one and waiting for another could meet this transaction in a cycle.
  if (dialect.rowLocks) {
    for (const ids of chunks(free.map((inbox) => inbox.id).sort(), MAX_IDS_PER_STATEMENT)) {
      await trx.selectFrom('inboxes').select('id').where('id', 'in', ids).orderBy('id').forNoKeyUpdate().execute();
    }
  }
  for (const inbox of free) {
    const expiresAt = toDate(inbox.created_at).getTime() + rules.premiumTtlMs;
    await trx.updateTable('inboxes').set({ license_id: licenseId, expires_at: expiresAt }).where('id', '=', inbox.id).execute();
  }
  return status;
}

async function countActiveLicenseInboxes(trx: Kysely<Database>, licenseId: string, now: Date): Promise<number> {
  const row = await trx
    .selectFrom('inboxes')
    .select((eb) => eb.fn.countAll<DbCount>().as('n'))
    .where('license_id', '=', licenseId)
    .where('expires_at', '>', toMillis(now))
    .executeTakeFirst();
  return toCount(row?.n);
}

/**
 * Messages and raw bytes per inbox (absent inboxes hold nothing): the counters stored on the
 * inbox rows (migration 0005-inbox-usage), one primary-key read per inbox, whatever it holds.
 */
export async function usageOf(db: Kysely<Database>, inboxIds: readonly string[]): Promise<Map<string, InboxUsage>> {
  const usage = new Map<string, InboxUsage>();
  for (const ids of chunks(inboxIds, MAX_IDS_PER_STATEMENT)) {
    const rows = await db.selectFrom('inboxes').select(['id', 'message_count', 'byte_count']).where('id', 'in', ids).execute();
    for (const row of rows) usage.set(row.id, toUsage(row));
  }
  return usage;
}
