import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresPool, createPostgresStore } from '../../src/storage/sql/postgres-store.js';
import type { SqlMailStore } from '../../src/storage/sql/sql-mail-store.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/postgres-test-database.js';
import { addInbox, at, deliver } from './mail-store-fixtures.js';
import { runWebhookStoreContract } from './webhook-store-contract.js';

/** Every table the store writes, emptied between tests (the database is this file's own). */
const TABLES = ['webhook_attempts', 'webhook_deliveries', 'webhooks', 'message_insights', 'attachments', 'messages', 'contents', 'inboxes', 'sessions', 'licenses', 'rate_limits'];

const available = await postgresAvailable('WebhookStore contract on PostgreSQL');

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

  runWebhookStoreContract('postgres', async () => {
    const store = storeOn(url());
    await store.migrate();
    const pool = createPostgresPool(url(), { poolSize: 1, onConnectionError: () => undefined });
    try {
      await pool.query(`truncate ${TABLES.join(', ')}`);
    } finally {
      await pool.end();
    }
    return store;
  });

  it('several nodes claiming at once take disjoint deliveries (FOR UPDATE SKIP LOCKED)', async () => {
    const nodes = Array.from({ length: 4 }, () => storeOn(url(), 4));
    try {
      await nodes[0]?.migrate();
      const writer = nodes[0] as SqlMailStore;
      const inboxes = await Promise.all(Array.from({ length: 10 }, () => addInbox(writer)));
      for (const inbox of inboxes) {
        await writer.webhooks.setWebhook({ inboxId: inbox.id, url: 'https://hooks.example.org/', secret: 'whsec_0123456789abcdef', createdAt: at(0) });
      }
      for (let i = 0; i < 20; i += 1) await deliver(writer, inboxes.map((inbox) => inbox.id));
      const claims = await Promise.all(
        nodes.flatMap((node) => Array.from({ length: 5 }, () => node.webhooks.claimDue(at(10_000_000), 12, 60_000))),
      );
      const ids = claims.flat().map((delivery) => delivery.id);
      expect(ids).toHaveLength(200);
      expect(new Set(ids).size).toBe(200);
    } finally {
      await Promise.all(nodes.map((node) => node.close()));
    }
  });
});
