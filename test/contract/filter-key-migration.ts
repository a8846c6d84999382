import { Migrator, sql, type Kysely } from 'kysely';
import { expect } from 'vitest';
import type { MailStore } from '../../src/ports/mail-store.js';
import type { Database } from '../../src/storage/sql/database.js';
import type { SqlDialect } from '../../src/storage/sql/dialect.js';
import { createMigrationProvider } from '../../src/storage/sql/migrations.js';
import { at, makeMail, openPolicy, storedIds } from './mail-store-fixtures.js';
import { listMessageIds } from '../helpers/store-reads.js';

/** The last migration before the copies kept their match keys (0006-filter-keys). */
const BEFORE_KEYS = '0005-inbox-usage';

/** Copies stored before the keys: more than two of the migration's backfill batches (500). */
export const SEEDED_COPIES = 1100;

/** The inbox the seeded copies are in. */
export const SEEDED_INBOX = 'inbox-keys';

/** The subject of seeded copy `i`: every 100th is Unicode that only a Unicode fold matches. */
function seededSubject(i: number): string {
  return i % 100 === 7 ? `ÉLAN ${i}` : `plain ${i}`;
}

/**
 * Migrates `db` to the schema before the match keys and stores SEEDED_COPIES copies there
 * directly, as a release before them would have: no keys, and no recipient (before 0003 it was '').
 */
export async function seedBeforeFilterKeys(db: Kysely<Database>, dialect: SqlDialect): Promise<void> {
  const { error } = await new Migrator({ db, provider: createMigrationProvider(dialect) }).migrateTo(BEFORE_KEYS);
  if (error !== undefined) throw error;
  const created = at(0).getTime();
  await db
    .insertInto('inboxes')
    .values({ id: SEEDED_INBOX, username: 'seedkeys', domain: 'tempinbox.test', created_at: created, expires_at: at(60).getTime(), session_id: null, license_id: null })
    .execute();
  const indexes = Array.from({ length: SEEDED_COPIES }, (_, i) => i);
  for (let start = 0; start < SEEDED_COPIES; start += 100) {
    const batch = indexes.slice(start, start + 100);
    await db
      .insertInto('contents')
      .values(batch.map((i) => ({
        id: `content-${i}`, envelope_from: `bounce${i}@example.org`, from_header: `Straße ${i} <s${i}@example.org>`, to_header: '', subject: seededSubject(i),
        text_body: '', html_body: null, headers_json: '[]', message_id_header: null, size: 1, attachment_count: 0, created_at: created, raw: Buffer.alloc(1),
      })))
      .execute();
    await db.insertInto('messages').values(batch.map((i) => ({ id: `message-${i}`, inbox_id: SEEDED_INBOX, content_id: `content-${i}`, received_at: created }))).execute();
  }
}

/** After `store.migrate()` on the seeded database: every copy has its keys, folded by Unicode. */
export async function expectBackfilledKeys(store: MailStore, db: Kysely<Database>): Promise<void> {
  const missing = await sql<{ n: number | string }>`select count(*) as n from messages where to_key is null or from_key is null or subject_key is null`.execute(db);
  expect(Number(missing.rows[0]?.n)).toBe(0);
  const unicode = Array.from({ length: SEEDED_COPIES }, (_, i) => i).filter((i) => seededSubject(i).startsWith('ÉLAN'));
  // The lower() of the fallback folds only ASCII on SQLite: these match only through the keys.
  const found = await listMessageIds(store, SEEDED_INBOX, { limit: 100, filter: { subject: 'élan' } });
  expect(found.ids).toEqual(unicode.map((i) => `message-${i}`).reverse());
  expect((await listMessageIds(store, SEEDED_INBOX, { limit: 100, filter: { from: 'STRASSE 1099 <' } })).ids).toEqual(['message-1099']);
  // The recipient of a copy from before 0003 is the inbox address.
  expect((await listMessageIds(store, SEEDED_INBOX, { limit: 1, filter: { to: 'SEEDKEYS@tempinbox' } })).ids).toEqual(['message-1099']);
}

/**
 * A copy without keys, as a node of an earlier release stores it during a rolling upgrade
 * (`clearKeys` sets them NULL behind the store's back): the filters still find it, through
 * the database's lower() of its fields.
 */
export async function expectKeylessCopiesMatched(store: MailStore, clearKeys: (messageId: string) => Promise<void>): Promise<void> {
  const inbox = { id: 'inbox-keyless', username: 'keyless', domain: 'tempinbox.test', createdAt: at(0), expiresAt: at(60), sessionId: null, licenseId: null };
  expect(await store.insertInbox(inbox, at(0))).toBe('created');
  const [keyless, keyed] = await Promise.all(
    ['Old Node Subject', 'New Node Subject'].map(async (subject) => {
      const outcomes = await store.insertMessage(
        { ...makeMail({ subject, from: 'Old Sender <OLD@example.org>', envelopeFrom: 'Bounce@Example.org' }), recipients: new Map([[inbox.id, 'keyless+Tag@tempinbox.test']]) },
        [inbox.id],
        openPolicy(),
      );
      return storedIds(outcomes).get(inbox.id) ?? '';
    }),
  );
  await clearKeys(keyless ?? '');
  const matching = async (filter: { to?: string; from?: string; subject?: string }) => (await listMessageIds(store, inbox.id, { limit: 10, filter })).ids.sort();
  const both = [keyless ?? '', keyed ?? ''].sort();
  expect(await matching({ subject: 'node SUBJECT' })).toEqual(both);
  expect(await matching({ subject: 'OLD NODE' })).toEqual([keyless]);
  expect(await matching({ from: 'old@example' })).toEqual(both);
  expect(await matching({ from: 'bounce@example' })).toEqual(both);
  expect(await matching({ to: '+TAG@' })).toEqual(both);
  expect(await matching({ to: '+tag@', subject: 'new' })).toEqual([keyed]);
}
