import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { StoreFailureError, StoreUnavailableError, type MailStore } from '../../src/ports/mail-store.js';
import type { Database } from '../../src/storage/sql/database.js';
import { sqliteDialect } from '../../src/storage/sql/dialect.js';
import { createSqliteStore, openSqliteDatabase } from '../../src/storage/sql/sqlite-store.js';
import { runMailStoreContract } from './mail-store-contract.js';
import { addInbox, allByteValues, at, deliver, deliverOne, expectBytes, makeAttachment, makeInbox, rangedAttachments } from './mail-store-fixtures.js';
import { expectBackfilledUsage, seedBeforeUsageCounters } from './usage-migration.js';
import { expectBackfilledKeys, expectKeylessCopiesMatched, seedBeforeFilterKeys } from './filter-key-migration.js';
import { countMessages } from '../helpers/store-reads.js';

const root = mkdtempSync(join(tmpdir(), 'tempinbox-sqlite-'));
let fileNumber = 0;
/** A path in a fresh folder per call, so no test sees another's database. */
const freshPath = (): string => join(mkdtempSync(join(root, 'db-')), `store-${(fileNumber += 1)}.db`);

afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The file of each store the contract made, for its raw writes. */
const files = new WeakMap<MailStore, string>();

runMailStoreContract(
  'sqlite file',
  () => {
    const path = freshPath();
    const store = createSqliteStore(path);
    files.set(store, path);
    return Promise.resolve(store);
  },
  undefined,
  // A connection of its own, like another process (an old node) writing the file.
  (store, inboxId, usage) => {
    const raw = openSqliteDatabase(files.get(store) ?? '');
    try {
      raw.prepare('update inboxes set message_count = ?, byte_count = ? where id = ?').run(usage.messages, usage.bytes, inboxId);
    } finally {
      raw.close();
    }
    return Promise.resolve();
  },
);
// No raw access to a ':memory:' database but through the store itself: its recountUsage test
// is left to the file store above, which runs the same code.
runMailStoreContract('sqlite :memory:', () => Promise.resolve(createSqliteStore(':memory:')));

describe('SQLite store', () => {
  it('opens with WAL, synchronous=FULL, a busy timeout and foreign keys', () => {
    const database = openSqliteDatabase(freshPath());
    try {
      expect(database.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(database.pragma('synchronous', { simple: true })).toBe(2); // 2 = FULL
      expect(database.pragma('busy_timeout', { simple: true })).toBe(5000);
      expect(database.pragma('foreign_keys', { simple: true })).toBe(1);
    } finally {
      database.close();
    }
  });

  it('leaves the file in WAL mode and keeps the data across close and reopen', async () => {
    const path = freshPath();
    const first = createSqliteStore(path);
    await first.migrate();
    const inbox = await addInbox(first, { expiresAt: at(60) });
    const raw = allByteValues();
    const id = await deliverOne(first, inbox.id, { raw, attachments: [makeAttachment(allByteValues())] });
    await first.close();

    const peek = new BetterSqlite3(path, { readonly: true });
    try {
      expect(peek.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      peek.close();
    }

    const second = createSqliteStore(path);
    try {
      await second.migrate();
      expect(await second.findInboxById(inbox.id)).toEqual(inbox);
      expectBytes((await second.findRawMessage(id))?.raw, raw);
      const view = await second.findMessage(id);
      expectBytes((await second.findAttachment(id, view?.attachments[0]?.id ?? ''))?.content, allByteValues());
    } finally {
      await second.close();
    }
  });

  it('stores an attachment that is a range of the raw message as that range, without its bytes', async () => {
    const path = freshPath();
    const store = createSqliteStore(path);
    try {
      await store.migrate();
      const inbox = await addInbox(store, { expiresAt: at(60) });
      const { raw, attachments } = rangedAttachments();
      await deliverOne(store, inbox.id, { raw, attachments });
      const peek = new BetterSqlite3(path, { readonly: true });
      try {
        const rows = peek.prepare('select length(data) as bytes, size, raw_start, raw_end, raw_encoding from attachments order by position').all();
        const [base64, plain] = attachments.map((attachment) => attachment.rawRange);
        expect(rows).toEqual([
          { bytes: 0, size: 512, raw_start: base64?.start, raw_end: base64?.end, raw_encoding: 'base64' },
          { bytes: 0, size: 6, raw_start: plain?.start, raw_end: plain?.end, raw_encoding: 'identity' },
          { bytes: 3, size: 3, raw_start: null, raw_end: null, raw_encoding: null },
        ]);
      } finally {
        peek.close();
      }
    } finally {
      await store.close();
    }
  });

  it('deletes contents and attachments once no copy refers to them (not observable through the port)', async () => {
    const path = freshPath();
    const store = createSqliteStore(path);
    const rows = (): Record<string, number> => {
      const peek = new BetterSqlite3(path, { readonly: true });
      try {
        const count = (table: string): number => (peek.prepare(`select count(*) as n from ${table}`).get() as { n: number }).n;
        expect(peek.pragma('foreign_key_check')).toEqual([]);
        return { contents: count('contents'), attachments: count('attachments'), messages: count('messages') };
      } finally {
        peek.close();
      }
    };
    try {
      await store.migrate();
      const a = await addInbox(store, { expiresAt: at(10) });
      const b = await addInbox(store, { expiresAt: at(100) });
      const c = await addInbox(store, { expiresAt: at(100) });
      const attachments = [makeAttachment(new Uint8Array([1])), makeAttachment(new Uint8Array([2]))];
      const shared = await deliver(store, [a.id, b.id, c.id], { attachments });
      await deliverOne(store, a.id, { attachments });
      await deliverOne(store, b.id, { attachments });
      const onlyC = await deliverOne(store, c.id);
      expect(rows()).toEqual({ contents: 4, attachments: 6, messages: 6 });

      // Takeover of a's name deletes a's copies; the content shared with b and c stays.
      expect(await store.insertInbox(makeInbox({ username: a.username }), at(20))).toBe('created');
      expect(rows()).toEqual({ contents: 3, attachments: 4, messages: 4 });
      await store.deleteMessage(shared.get(b.id) ?? '');
      expect(rows()).toEqual({ contents: 3, attachments: 4, messages: 3 });
      await store.deleteInbox(b.id);
      expect(rows()).toEqual({ contents: 2, attachments: 2, messages: 2 });
      await store.deleteMessage(onlyC);
      expect(rows()).toEqual({ contents: 1, attachments: 2, messages: 1 });
      expect(await store.deleteExpired(at(1000), 10)).toEqual({ inboxes: 2, messages: 1, sessions: 0 });
      expect(rows()).toEqual({ contents: 0, attachments: 0, messages: 0 });
    } finally {
      await store.close();
    }
  });

  it('migration 0005-inbox-usage counts the messages stored before it into the usage counters', async () => {
    const path = freshPath();
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: openSqliteDatabase(path) }) });
    try {
      await seedBeforeUsageCounters(db, sqliteDialect);
    } finally {
      await db.destroy();
    }
    const store = createSqliteStore(path);
    try {
      await store.migrate();
      await expectBackfilledUsage(store);
    } finally {
      await store.close();
    }
  });

  it('migration 0006-filter-keys gives the copies stored before it their match keys, in batches', async () => {
    const path = freshPath();
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: openSqliteDatabase(path) }) });
    try {
      await seedBeforeFilterKeys(db, sqliteDialect);
      const store = createSqliteStore(path);
      try {
        await store.migrate();
        await expectBackfilledKeys(store, db);
      } finally {
        await store.close();
      }
    } finally {
      await db.destroy();
    }
  });

  it('matches a copy stored without match keys (an earlier release) through lower()', async () => {
    const path = freshPath();
    const store = createSqliteStore(path);
    try {
      await store.migrate();
      await expectKeylessCopiesMatched(store, async (messageId) => {
        const raw = openSqliteDatabase(path);
        try {
          raw.prepare('update messages set to_key = null, from_key = null, subject_key = null where id = ?').run(messageId);
        } finally {
          raw.close();
        }
      });
    } finally {
      await store.close();
    }
  });

  it('creates the folder of a new database file', async () => {
    const path = join(root, 'nested', 'deeper', 'tempinbox.db');
    const store = createSqliteStore(path);
    try {
      await store.migrate();
      await expect(store.ping()).resolves.toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it('reports a failing query as StoreFailureError (a bug: 500), never as an outage', async () => {
    const path = freshPath();
    const store = createSqliteStore(path);
    try {
      await store.migrate();
      const inbox = await addInbox(store);
      // Break the schema behind the store's back: every query on that table now fails in the driver.
      const other = new BetterSqlite3(path);
      other.exec('drop table attachments');
      other.close();
      await expect(store.findAttachment('m', 'a')).rejects.toBeInstanceOf(StoreFailureError);
      await expect(deliverOne(store, inbox.id, { attachments: [makeAttachment(new Uint8Array([1]))] })).rejects.toBeInstanceOf(
        StoreFailureError,
      );
      // The failed delivery rolled back as a whole.
      expect(await countMessages(store, inbox.id)).toBe(0);
    } finally {
      await store.close();
    }
  });

  it('reports a database that cannot be opened as StoreUnavailableError', () => {
    // A folder where the file should be: SQLite cannot open it.
    expect(() => createSqliteStore(root)).toThrow(StoreUnavailableError);
  });
});
