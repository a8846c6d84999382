import { Kysely, PostgresDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../src/ports/mail-store.js';
import type { Database } from '../../src/storage/sql/database.js';
import { postgresDialect } from '../../src/storage/sql/dialect.js';
import { PostgresInboxEvents } from '../../src/storage/sql/postgres-inbox-events.js';
import { createPostgresPool, createPostgresStore } from '../../src/storage/sql/postgres-store.js';
import type { SqlMailStore } from '../../src/storage/sql/sql-mail-store.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/postgres-test-database.js';
import { runMailStoreContract } from './mail-store-contract.js';
import { addInbox, allByteValues, at, deliverOne, expectBytes, makeAttachment, rangedAttachments } from './mail-store-fixtures.js';
import { expectBackfilledUsage, seedBeforeUsageCounters } from './usage-migration.js';
import { expectBackfilledKeys, expectKeylessCopiesMatched, seedBeforeFilterKeys } from './filter-key-migration.js';

/** Every table the store writes, emptied between tests (the database is this file's own). */
const TABLES = ['webhook_attempts', 'webhook_deliveries', 'webhooks', 'message_insights', 'attachments', 'messages', 'contents', 'inboxes', 'sessions', 'licenses', 'rate_limits'];

const available = await postgresAvailable('MailStore contract on PostgreSQL');

/** A store on `url` with its own pool, like one node; connection errors are ignored here. */
function storeOn(url: string, poolSize = 10): SqlMailStore {
  return createPostgresStore(createPostgresPool(url, { poolSize, onConnectionError: () => undefined }));
}

describe.skipIf(!available)('PostgreSQL', () => {
  let database: TestDatabase | undefined;
  const url = (): string => {
    if (database === undefined) throw new Error('no test database: beforeAll did not run');
    return database.url;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.drop();
  });

  runMailStoreContract('postgres', async () => {
    const store = storeOn(url());
    await store.migrate();
    // Each test starts empty: one database per file, emptied per test (a database per test
    // would cost a CREATE DATABASE each).
    const pool = createPostgresPool(url(), { poolSize: 1, onConnectionError: () => undefined });
    try {
      await pool.query(`truncate ${TABLES.join(', ')}`);
    } finally {
      await pool.end();
    }
    return store;
  }, async () => {
    // Two nodes: the writer's bus publishes locally only, so a wake-up on the listener's
    // node can only come through NOTIFY from the delivering transaction.
    const listener = new PostgresInboxEvents({ url: url() });
    const publisher = new PostgresInboxEvents({ url: url() });
    await Promise.all([listener.start(), publisher.start()]);
    return { listener, publisher, close: async () => void (await Promise.all([listener.close(), publisher.close()])) };
  }, async (_store, inboxId, usage) => {
    // A connection of its own, like a node of an earlier release writing the database.
    const pool = createPostgresPool(url(), { poolSize: 1, onConnectionError: () => undefined });
    try {
      await pool.query('update inboxes set message_count = $2, byte_count = $3 where id = $1', [inboxId, usage.messages, usage.bytes]);
    } finally {
      await pool.end();
    }
  });

  describe('PostgreSQL store', () => {
    it('keeps raw messages and attachments byte-exact in bytea', async () => {
      const store = storeOn(url());
      try {
        await store.migrate();
        const inbox = await addInbox(store, { expiresAt: at(60) });
        const raw = allByteValues();
        const id = await deliverOne(store, inbox.id, { raw, attachments: [makeAttachment(allByteValues())] });
        expectBytes((await store.findRawMessage(id))?.raw, raw);
        const view = await store.findMessage(id);
        expectBytes((await store.findAttachment(id, view?.attachments[0]?.id ?? ''))?.content, allByteValues());
      } finally {
        await store.close();
      }
    });

    it('stores an attachment that is a range of the raw message as that range, without its bytes', async () => {
      const store = storeOn(url());
      const pool = createPostgresPool(url(), { poolSize: 1, onConnectionError: () => undefined });
      try {
        await store.migrate();
        const inbox = await addInbox(store, { expiresAt: at(60) });
        const { raw, attachments, file } = rangedAttachments();
        const id = await deliverOne(store, inbox.id, { raw, attachments });
        const view = await store.findMessage(id);
        const contentId = (await pool.query<{ content_id: string }>('select content_id from messages where id = $1', [id])).rows[0]?.content_id;
        const { rows } = await pool.query(
          'select length(data) as bytes, size, raw_start, raw_end, raw_encoding from attachments where content_id = $1 order by position',
          [contentId],
        );
        const [base64, plain] = attachments.map((attachment) => attachment.rawRange);
        expect(rows).toEqual([
          { bytes: 0, size: 512, raw_start: base64?.start, raw_end: base64?.end, raw_encoding: 'base64' },
          { bytes: 0, size: 6, raw_start: plain?.start, raw_end: plain?.end, raw_encoding: 'identity' },
          { bytes: 3, size: 3, raw_start: null, raw_end: null, raw_encoding: null },
        ]);
        expectBytes((await store.findAttachment(id, view?.attachments[0]?.id ?? ''))?.content, file);
      } finally {
        await pool.end();
        await store.close();
      }
    });

    it('several nodes migrating one fresh database at once apply each migration once', async () => {
      const fresh = await createTestDatabase();
      const stores = Array.from({ length: 4 }, () => storeOn(fresh.url, 2));
      try {
        const results = await Promise.allSettled(stores.map((store) => store.migrate()));
        expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
        const pool = createPostgresPool(fresh.url, { poolSize: 1, onConnectionError: () => undefined });
        try {
          const applied = await pool.query<{ name: string }>('select name from kysely_migration order by name');
          expect(applied.rows.map((row) => row.name)).toEqual(['0001-initial', '0002-rate-limits', '0003-message-recipient', '0004-message-insights', '0005-inbox-usage', '0006-filter-keys', '0007-webhooks', '0008-attachment-ranges']);
          const unlogged = await pool.query<{ relpersistence: string }>("select relpersistence from pg_class where relname = 'rate_limits'");
          // 'u' = UNLOGGED: fair-use upserts never wait for a WAL fsync.
          expect(unlogged.rows[0]?.relpersistence).toBe('u');
        } finally {
          await pool.end();
        }
      } finally {
        await Promise.all(stores.map((store) => store.close()));
        await fresh.drop();
      }
    });

    it('migration 0005-inbox-usage counts the messages stored before it into the usage counters', async () => {
      const fresh = await createTestDatabase();
      try {
        const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: createPostgresPool(fresh.url, { poolSize: 1, onConnectionError: () => undefined }) }) });
        try {
          await seedBeforeUsageCounters(db, postgresDialect);
        } finally {
          await db.destroy();
        }
        const store = storeOn(fresh.url);
        try {
          await store.migrate();
          await expectBackfilledUsage(store);
        } finally {
          await store.close();
        }
      } finally {
        await fresh.drop();
      }
    });

    it('migration 0006-filter-keys gives the copies stored before it their match keys, in batches', async () => {
      const fresh = await createTestDatabase();
      try {
        const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: createPostgresPool(fresh.url, { poolSize: 1, onConnectionError: () => undefined }) }) });
        try {
          await seedBeforeFilterKeys(db, postgresDialect);
          const store = storeOn(fresh.url);
          try {
            await store.migrate();
            await expectBackfilledKeys(store, db);
          } finally {
            await store.close();
          }
        } finally {
          await db.destroy();
        }
      } finally {
        await fresh.drop();
      }
    });

    it('matches a copy stored without match keys (an earlier release) through lower()', async () => {
      const store = storeOn(url());
      const pool = createPostgresPool(url(), { poolSize: 1, onConnectionError: () => undefined });
      try {
        await store.migrate();
        await expectKeylessCopiesMatched(store, async (messageId) => {
          await pool.query('update messages set to_key = null, from_key = null, subject_key = null where id = $1', [messageId]);
        });
      } finally {
        await pool.end();
        await store.close();
      }
    });

    it('an unreachable server fails fast with StoreUnavailableError', async () => {
      // Port 1 on loopback: nothing listens, the connection is refused at once.
      const store = storeOn('postgres://postgres@127.0.0.1:1/nothing');
      try {
        const started = Date.now();
        await expect(store.ping()).rejects.toBeInstanceOf(StoreUnavailableError);
        await expect(store.migrate()).rejects.toBeInstanceOf(StoreUnavailableError);
        await expect(store.findInboxById('x')).rejects.toBeInstanceOf(StoreUnavailableError);
        expect(Date.now() - started).toBeLessThan(10_000);
      } finally {
        await store.close();
      }
    });
  });
});
