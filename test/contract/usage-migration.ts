import { Migrator, type Kysely } from 'kysely';
import { expect } from 'vitest';
import type { MailStore } from '../../src/ports/mail-store.js';
import type { Database } from '../../src/storage/sql/database.js';
import type { SqlDialect } from '../../src/storage/sql/dialect.js';
import { createMigrationProvider } from '../../src/storage/sql/migrations.js';
import { at, deliverOne } from './mail-store-fixtures.js';
import { inboxUsage } from '../helpers/store-reads.js';

/** The last migration before the inboxes kept their usage (0005-inbox-usage). */
const BEFORE_USAGE = '0004-message-insights';

/** Inboxes of the seeded database and what each holds. */
const SEEDED = { full: { messages: 3, bytes: 10 + 20 + 30 }, sharing: { messages: 1, bytes: 30 }, empty: { messages: 0, bytes: 0 } };

/**
 * Migrates `db` to the schema before the usage counters and stores messages there directly, as
 * a release before them would have: `full` holds three, `sharing` a copy of one of them, `empty` none.
 */
export async function seedBeforeUsageCounters(db: Kysely<Database>, dialect: SqlDialect): Promise<void> {
  const { error } = await new Migrator({ db, provider: createMigrationProvider(dialect) }).migrateTo(BEFORE_USAGE);
  if (error !== undefined) throw error;
  const created = at(0).getTime();
  for (const name of Object.keys(SEEDED)) {
    await db
      .insertInto('inboxes')
      .values({ id: `inbox-${name}`, username: `seed${name}`, domain: 'tempinbox.test', created_at: created, expires_at: at(60).getTime(), session_id: null, license_id: null })
      .execute();
  }
  for (const size of [10, 20, 30]) {
    await db
      .insertInto('contents')
      .values({
        id: `content-${size}`, envelope_from: '', from_header: '', to_header: '', subject: `s${size}`, text_body: '', html_body: null,
        headers_json: '[]', message_id_header: null, size, attachment_count: 0, created_at: created, raw: Buffer.alloc(size),
      })
      .execute();
    await db.insertInto('messages').values({ id: `message-full-${size}`, inbox_id: 'inbox-full', content_id: `content-${size}`, received_at: created }).execute();
  }
  await db.insertInto('messages').values({ id: 'message-sharing-30', inbox_id: 'inbox-sharing', content_id: 'content-30', received_at: created }).execute();
}

/** After `store.migrate()` on the seeded database: the counters hold what was there, and move on from it. */
export async function expectBackfilledUsage(store: MailStore): Promise<void> {
  for (const [name, usage] of Object.entries(SEEDED)) expect(await inboxUsage(store, `inbox-${name}`), name).toEqual(usage);
  await deliverOne(store, 'inbox-empty', { raw: new Uint8Array(5) });
  expect(await store.deleteMessage('message-full-20')).toBe(true);
  expect(await inboxUsage(store, 'inbox-empty')).toEqual({ messages: 1, bytes: 5 });
  expect(await inboxUsage(store, 'inbox-full')).toEqual({ messages: 2, bytes: 40 });
}
