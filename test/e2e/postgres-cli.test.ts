import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresPool, createPostgresStore } from '../../src/storage/sql/postgres-store.js';
import { addInbox, at, deliver } from '../contract/mail-store-fixtures.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/postgres-test-database.js';
import { runBin } from '../helpers/server-process.js';
import { inboxUsage } from '../helpers/store-reads.js';

const available = await postgresAvailable('CLI on PostgreSQL');

/** `./bin/tempinbox` against PostgreSQL: the explicit migrate step, the usage recount, and a refused start. */
describe.skipIf(!available)('CLI on PostgreSQL', () => {
  const databases: TestDatabase[] = [];
  afterAll(async () => {
    await Promise.all(databases.map((database) => database.drop()));
  });

  it('`migrate` run by several hosts at once applies the schema once and exits 0 everywhere', async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const runs = await Promise.all([0, 1, 2].map(() => runBin(['migrate'], { DATABASE_URL: database.url })));
    for (const run of runs) {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toBe('migrations applied\n');
    }
    // The schema is usable: a license minted afterwards is listed.
    expect((await runBin(['license', 'create'], { DATABASE_URL: database.url })).code).toBe(0);
    expect((await runBin(['license', 'list'], { DATABASE_URL: database.url })).stdout.trim().split('\n')).toHaveLength(2);
  });

  it('`recount-usage` sets counters left wrong and prints one line', async () => {
    const database = await createTestDatabase();
    databases.push(database);
    const pool = createPostgresPool(database.url, { poolSize: 2, onConnectionError: () => undefined });
    const store = createPostgresStore(pool);
    try {
      await store.migrate();
      const inboxes = [await addInbox(store, { expiresAt: at(60) }), await addInbox(store, { expiresAt: at(60) }), await addInbox(store, { expiresAt: at(60) })];
      await deliver(store, inboxes.map((inbox) => inbox.id), { raw: new Uint8Array(70) });
      // As a node of a release before the counters leaves them.
      await pool.query('update inboxes set message_count = 0, byte_count = 0 where id <> $1', [inboxes[0]?.id]);
      const run = await runBin(['recount-usage'], { DATABASE_URL: database.url });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toBe('recounted 3 inboxes, corrected 2\n');
      for (const inbox of inboxes) expect(await inboxUsage(store, inbox.id)).toEqual({ messages: 1, bytes: 70 });
    } finally {
      await store.close();
    }
  });

  it('an unreachable DATABASE_URL exits non-zero with one line naming it, without the password', async () => {
    // Port 1 on loopback: nothing listens, so the connection is refused at once.
    const url = 'postgres://postgres:s3cret@127.0.0.1:1/tempinbox';
    const started = Date.now();
    const result = await runBin(['serve'], { DATABASE_URL: url, PORT: '0', SMTP_PORT: '0', HOST: '127.0.0.1' });
    expect(result.code).not.toBe(0);
    expect(result.code).not.toBeNull();
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('DATABASE_URL="postgres://postgres:***@127.0.0.1:1/tempinbox"');
    expect(result.stderr).not.toContain('s3cret');
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});
