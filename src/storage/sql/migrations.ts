import { sql, type Kysely, type Migration, type MigrationProvider } from 'kysely';
import { FOLD_INPUT_CHARS, fromMatchKey, matchKey } from '../../domain/match-key.js';
import type { SqlDialect } from './dialect.js';

/**
 * The schema's history, oldest first. Append-only: a shipped migration is never edited, a
 * change is a new entry. Kept in code (no file-system autoloading) so the bundle carries it.
 * Names sort in application order.
 */
export function createMigrationProvider(dialect: SqlDialect): MigrationProvider {
  const migrations: Record<string, Migration> = {
    '0001-initial': { up: (db) => initialSchema(db, dialect) },
    '0002-rate-limits': { up: (db) => rateLimitSchema(db, dialect) },
    '0003-message-recipient': { up: (db) => messageRecipientSchema(db) },
    '0004-message-insights': { up: (db) => messageInsightsSchema(db) },
    '0005-inbox-usage': { up: (db) => inboxUsageSchema(db, dialect) },
    '0006-filter-keys': { up: (db) => filterKeysSchema(db) },
    '0007-webhooks': { up: (db) => webhookSchema(db, dialect) },
    '0008-attachment-ranges': { up: (db) => attachmentRangeSchema(db) },
  };
  return { getMigrations: () => Promise.resolve(migrations) };
}

/** Name of the shared fair-use counter table (src/rate-limit/postgres-rate-limiter.ts). */
export const RATE_LIMIT_TABLE = 'rate_limits';

/**
 * Fair-use counters shared by every node (docs/scaling.md): the layout rate-limiter-flexible's
 * RateLimiterPostgres reads and writes. Made here rather than by the library at start, where
 * several nodes issuing CREATE TABLE at once race. Ephemeral (UNLOGGED on PostgreSQL): a
 * counter lost in a crash only hands a client a fresh window, and skipping the WAL keeps the
 * per-request upsert from waiting for an fsync. A single SQLite node counts in memory and
 * leaves the table empty; it exists there too so both backends have one schema.
 */
async function rateLimitSchema(db: Kysely<unknown>, d: SqlDialect): Promise<void> {
  await d
    .ephemeralTable(db.schema.createTable(RATE_LIMIT_TABLE))
    .addColumn('key', 'varchar(255)', (c) => c.primaryKey())
    .addColumn('points', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('expire', d.millisType)
    .execute();
  // The library's periodic "delete rows expired an hour ago".
  await db.schema.createIndex('rate_limits_expire').on(RATE_LIMIT_TABLE).column('expire').execute();
}

/**
 * The envelope address each copy was delivered to (docs/api.md "Messages": `recipient`, and
 * the `to` filter of check). Rows stored before it have '' and show the inbox address.
 */
async function messageRecipientSchema(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('messages').addColumn('recipient', 'text', (c) => c.notNull().defaultTo('')).execute();
}

/** Every table and index of the first release. */
async function initialSchema(db: Kysely<unknown>, d: SqlDialect): Promise<void> {
  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', d.millisType, (c) => c.notNull())
    .addColumn('expires_at', d.millisType, (c) => c.notNull())
    // No foreign key: a license row is never deleted, and sessions are swept on their own.
    .addColumn('license_id', 'text')
    .execute();
  // The sweeper's range scan, and the per-license session count of redeem.
  await db.schema.createIndex('sessions_expires_at').on('sessions').column('expires_at').execute();
  await db.schema.createIndex('sessions_license_id').on('sessions').column('license_id').execute();

  await db.schema
    .createTable('licenses')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', d.millisType, (c) => c.notNull())
    .addColumn('valid_until', d.millisType, (c) => c.notNull())
    .addColumn('max_sessions', 'integer', (c) => c.notNull())
    .addColumn('revoked_at', d.millisType)
    .execute();
  await db.schema.createIndex('licenses_created_at').on('licenses').column('created_at').execute();

  await db.schema
    .createTable('inboxes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // Unique across domains while stored: an expired holder is deleted before a takeover.
    .addColumn('username', 'text', (c) => c.notNull().unique())
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('created_at', d.millisType, (c) => c.notNull())
    .addColumn('expires_at', d.millisType, (c) => c.notNull())
    // No foreign keys: an inbox outlives its session (premium inboxes belong to the license).
    .addColumn('session_id', 'text')
    .addColumn('license_id', 'text')
    .execute();
  await db.schema.createIndex('inboxes_expires_at').on('inboxes').column('expires_at').execute();
  await db.schema.createIndex('inboxes_session_id').on('inboxes').column('session_id').execute();
  await db.schema.createIndex('inboxes_license_id').on('inboxes').column('license_id').execute();

  await db.schema
    .createTable('contents')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('envelope_from', 'text', (c) => c.notNull())
    .addColumn('from_header', 'text', (c) => c.notNull())
    .addColumn('to_header', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('text_body', 'text', (c) => c.notNull())
    .addColumn('html_body', 'text')
    .addColumn('headers_json', 'text', (c) => c.notNull())
    .addColumn('message_id_header', 'text')
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('attachment_count', 'integer', (c) => c.notNull())
    .addColumn('created_at', d.millisType, (c) => c.notNull())
    // Last on purpose: SQLite reads a row's columns in order, so listing never pages the blob in.
    .addColumn('raw', d.blobType, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('messages')
    .addColumn('seq', d.seqType, (c) => d.seqColumn(c))
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('inbox_id', 'text', (c) => c.notNull().references('inboxes.id'))
    .addColumn('content_id', 'text', (c) => c.notNull().references('contents.id'))
    .addColumn('received_at', d.millisType, (c) => c.notNull())
    .execute();
  // Listing newest first and `since`; also backs the inbox foreign key.
  await db.schema.createIndex('messages_inbox_id_seq').on('messages').columns(['inbox_id', 'seq']).execute();
  // "Is this content still referenced?" when a copy is deleted; backs the content foreign key.
  await db.schema.createIndex('messages_content_id').on('messages').column('content_id').execute();

  await db.schema
    .createTable('attachments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('content_id', 'text', (c) => c.notNull().references('contents.id'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('data', d.blobType, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('attachments_content_id_position')
    .on('attachments')
    .columns(['content_id', 'position'])
    .execute();
}

/**
 * What a message tells (codes, links, sender authentication), one row per content, computed
 * once when the message is received. A table of its own rather than columns of `contents`:
 * SQLite appends added columns after `raw`, and reading them would page through the blob on
 * every listing. JSON text; a content received before this migration has no row (read as
 * `[]`, `[]`, `null`).
 */
async function messageInsightsSchema(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('message_insights')
    .addColumn('content_id', 'text', (c) => c.primaryKey().references('contents.id'))
    .addColumn('codes_json', 'text', (c) => c.notNull())
    .addColumn('links_json', 'text', (c) => c.notNull())
    // NULL: not checked (MAIL_AUTH=off).
    .addColumn('auth_json', 'text')
    .execute();
}

/**
 * What each inbox holds, stored on its row (docs/architecture.md "Inbox usage counters"):
 * `message_count` copies and `byte_count` raw bytes (the sum of their contents' `size`), kept
 * exact by every write that adds or removes a copy, in the same transaction. The RCPT check
 * and the store-time quota read them instead of counting the inbox's messages, which cost
 * O(messages) twice per delivery. Backfilled here from the rows already stored, in the
 * migration's own transaction (so no node sees the columns before they are right).
 * `bigint` has INTEGER affinity on SQLite (64-bit there whatever the name); on PostgreSQL the
 * byte sum of a premium inbox may pass int4.
 */
async function inboxUsageSchema(db: Kysely<unknown>, d: SqlDialect): Promise<void> {
  await db.schema.alterTable('inboxes').addColumn('message_count', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('inboxes').addColumn('byte_count', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  // PostgreSQL: no copy may be stored or deleted between the count and the commit (a node of
  // an earlier release still running). ALTER TABLE holds inboxes exclusively already, and every
  // writer that holds messages before inboxes has no need of inboxes, so taking messages
  // second cannot deadlock. SQLite: the migration's transaction is the one writer anyway.
  if (d.rowLocks) await sql`lock table messages in share mode`.execute(db);
  await sql`
    update inboxes set (message_count, byte_count) =
      (select count(*), coalesce(sum(c.size), 0) from messages m join contents c on c.id = m.content_id where m.inbox_id = inboxes.id)
    where exists (select 1 from messages m where m.inbox_id = inboxes.id)`.execute(db);
}

/**
 * Copies keyed per statement by 0006-filter-keys' backfill: a row brings at most three fields
 * of FOLD_INPUT_CHARS (about 50 KB), so a batch holds a few MB at most, and 500 rows of 4
 * parameters stay far below the bind limits of both databases.
 */
const KEY_BACKFILL_ROWS = 500;

/**
 * The match keys of the `to`, `from` and `subject` filters (domain/match-key.ts), on every
 * copy: folded and bounded when the message is stored, so a filtered read searches at most
 * MATCH_KEY_CHARS per field (docs/architecture.md "Data model"). Columns of `messages`, not
 * `contents`: a filtered read then scans one table along its (inbox_id, seq) index, and
 * SQLite appends added columns after `raw`. Nullable: a node of an earlier release (a rolling
 * upgrade) stores copies without them, and reads match those with lower() instead
 * (filtered-scan.ts). The copies already stored get their keys here, in batches in seq
 * order, in the migration's own transaction (no node serves the new code before they are there).
 */
async function filterKeysSchema(db: Kysely<unknown>): Promise<void> {
  for (const column of ['to_key', 'from_key', 'subject_key']) await db.schema.alterTable('messages').addColumn(column, 'text').execute();
  let after = 0;
  // Each batch moves `after` forward along the primary key: as many batches as copies / KEY_BACKFILL_ROWS.
  for (;;) {
    const { rows } = await sql<{ seq: number | string; recipient: string; address: string; from_header: string; envelope_from: string; subject: string }>`
      select m.seq, m.recipient, i.username || '@' || i.domain as address,
        substr(c.from_header, 1, ${FOLD_INPUT_CHARS}) as from_header,
        substr(c.envelope_from, 1, ${FOLD_INPUT_CHARS}) as envelope_from,
        substr(c.subject, 1, ${FOLD_INPUT_CHARS}) as subject
      from messages m join contents c on c.id = m.content_id join inboxes i on i.id = m.inbox_id
      where m.seq > ${after} order by m.seq limit ${KEY_BACKFILL_ROWS}`.execute(db);
    const last = rows.at(-1);
    if (last === undefined) return;
    const keyed = rows.map(
      (row) =>
        sql`(cast(${Number(row.seq)} as bigint), ${matchKey(row.recipient !== '' ? row.recipient : row.address)}, ${fromMatchKey(row.from_header, row.envelope_from)}, ${matchKey(row.subject)})`,
    );
    // VALUES names its columns column1, column2… on both databases.
    await sql`update messages set to_key = v.column2, from_key = v.column3, subject_key = v.column4
      from (values ${sql.join(keyed)}) as v where messages.seq = v.column1`.execute(db);
    if (rows.length < KEY_BACKFILL_ROWS) return;
    after = Number(last.seq);
  }
}

/**
 * Webhooks (docs/api.md "Webhooks"): one per inbox (`webhooks`), the deliveries it is still
 * owed (`webhook_deliveries`, the outbox: a row is written in the transaction of its message and
 * deleted when delivered or given up) and the record of attempts (`webhook_attempts`, the last
 * few per inbox). Every row names its inbox, and deleting the inbox deletes them first.
 * `due_at` is when the next attempt may start; a claim moves it to the end of its lease, so a
 * node that dies holding a delivery gives it back when the lease runs out.
 */
async function webhookSchema(db: Kysely<unknown>, d: SqlDialect): Promise<void> {
  await db.schema
    .createTable('webhooks')
    .addColumn('inbox_id', 'text', (c) => c.primaryKey().references('inboxes.id'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('created_at', d.millisType, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('inbox_id', 'text', (c) => c.notNull().references('inboxes.id'))
    // No foreign key: the message may be deleted while its delivery is owed (then given up).
    .addColumn('message_id', 'text')
    .addColumn('event', 'text', (c) => c.notNull())
    // Attempts made so far.
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('due_at', d.millisType, (c) => c.notNull())
    .addColumn('lease_token', 'text')
    .addColumn('created_at', d.millisType, (c) => c.notNull())
    .execute();
  // The worker's "what is due now", oldest first.
  await db.schema.createIndex('webhook_deliveries_due_at').on('webhook_deliveries').column('due_at').execute();
  await db.schema.createIndex('webhook_deliveries_inbox_id').on('webhook_deliveries').column('inbox_id').execute();
  await db.schema
    .createTable('webhook_attempts')
    .addColumn('seq', d.seqType, (c) => d.seqColumn(c))
    .addColumn('inbox_id', 'text', (c) => c.notNull().references('inboxes.id'))
    .addColumn('delivery_id', 'text', (c) => c.notNull())
    .addColumn('message_id', 'text')
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('status', 'integer')
    .addColumn('error', 'text')
    .addColumn('at', d.millisType, (c) => c.notNull())
    .execute();
  // The last attempts of an inbox, newest first; also backs the inbox foreign key.
  await db.schema.createIndex('webhook_attempts_inbox_id_seq').on('webhook_attempts').columns(['inbox_id', 'seq']).execute();
}

/**
 * An attachment may be kept as a range of its content's raw message (domain/raw-range.ts):
 * `raw_start` and `raw_end` (bytes, end exclusive) and `raw_encoding` (`base64` or
 * `identity`), with an empty `data`. Rows written before, and attachments that are not such a
 * range, keep their bytes in `data` and NULL here.
 */
async function attachmentRangeSchema(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('attachments').addColumn('raw_start', 'integer').execute();
  await db.schema.alterTable('attachments').addColumn('raw_end', 'integer').execute();
  await db.schema.alterTable('attachments').addColumn('raw_encoding', 'text').execute();
}
