import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresPool, createPostgresStore } from '../../src/storage/sql/postgres-store.js';
import { MAX_PREPARED_STATEMENTS, PreparedStatements } from '../../src/storage/sql/postgres-prepared.js';
import { addInbox, deliverOne } from '../contract/mail-store-fixtures.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/postgres-test-database.js';
import { countMessages } from '../helpers/store-reads.js';

const available = await postgresAvailable('prepared statements on PostgreSQL');

describe('PreparedStatements', () => {
  it('names each text once and stops at MAX_PREPARED_STATEMENTS', () => {
    const statements = new PreparedStatements();
    statements.add('select 1');
    statements.add('select 1');
    expect(statements.size).toBe(1);
    for (let i = 0; i < MAX_PREPARED_STATEMENTS + 10; i += 1) statements.add(`select ${i + 2}`);
    expect(statements.size).toBe(MAX_PREPARED_STATEMENTS);
    expect(statements.nameOf(`select ${MAX_PREPARED_STATEMENTS + 5}`)).toBeUndefined();
  });
});

describe.skipIf(!available)('prepared statements on PostgreSQL', () => {
  let database: TestDatabase | undefined;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('deliveries and hot reads run prepared, and a table that gains a column (another node migrating) breaks no read', async () => {
    if (database === undefined) throw new Error('no test database');
    // One connection: the statements this test sees prepared are the store's own.
    const pool = createPostgresPool(database.url, { poolSize: 1, onConnectionError: () => undefined });
    const store = createPostgresStore(pool);
    try {
      await store.migrate();
      const inbox = await addInbox(store);
      await deliverOne(store, inbox.id);
      expect((await store.findInboxByUsername(inbox.username))?.id).toBe(inbox.id);
      const prepared = await pool.query<{ statement: string }>('select statement from pg_prepared_statements');
      const texts = prepared.rows.map((row) => row.statement);
      expect(texts.some((text) => text.includes('for no key update'))).toBe(true);
      expect(texts.some((text) => text.includes('insert into contents'))).toBe(true);
      expect(texts.some((text) => /from "inboxes" where "username"/.test(text))).toBe(true);

      // A prepared `select *` whose table changed fails with "cached plan must not change result type".
      await pool.query('alter table inboxes add column later_column text');
      expect((await store.findInboxByUsername(inbox.username))?.id).toBe(inbox.id);
      expect((await store.findInboxByUsername(inbox.username))?.id).toBe(inbox.id);
      await deliverOne(store, inbox.id);
      expect(await countMessages(store, inbox.id)).toBe(2);
    } finally {
      await store.close();
    }
  });
});
