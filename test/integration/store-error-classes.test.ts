import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { StoreFailureError, StoreUnavailableError } from '../../src/ports/mail-store.js';
import { classifyPostgresFailure, classifySqliteFailure } from '../../src/storage/sql/dialect.js';
import { createPostgresPool, createPostgresStore } from '../../src/storage/sql/postgres-store.js';
import { createSqliteStore } from '../../src/storage/sql/sqlite-store.js';
import { makeSession } from '../contract/mail-store-fixtures.js';
import { createTestDatabase, postgresAvailable, POSTGRES_TEST_URL } from '../helpers/postgres-test-database.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

/** The error `work` throws (fails the test when it throws none). */
async function caught(work: () => unknown): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

const root = mkdtempSync(join(tmpdir(), 'tempinbox-error-classes-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('SQLite failures by cause (errors raised by real better-sqlite3)', () => {
  it('a bad statement or an unexpected constraint is internal', async () => {
    const database = new BetterSqlite3(join(root, 'plain.db'));
    try {
      expect(classifySqliteFailure(await caught(() => database.exec('selec 1')))).toBe('internal');
      database.exec('create table t (id integer primary key, v text not null)');
      expect(classifySqliteFailure(await caught(() => database.exec('insert into t (id) values (1)')))).toBe('internal');
      expect(classifySqliteFailure(await caught(() => database.exec('select * from missing_table')))).toBe('internal');
    } finally {
      database.close();
    }
  });

  it('a file that cannot be opened is unavailable, a full database is full', async () => {
    // A folder where the file should be: SQLITE_CANTOPEN.
    expect(classifySqliteFailure(await caught(() => new BetterSqlite3(root, { fileMustExist: false })))).toBe('unavailable');
    const database = new BetterSqlite3(join(root, 'small.db'));
    try {
      database.exec('create table t (v blob)');
      // max_page_count makes SQLite answer SQLITE_FULL exactly as on a full disk.
      database.pragma('max_page_count = 8');
      const full = await caught(() => {
        for (let i = 0; i < 100; i += 1) database.prepare('insert into t values (?)').run(Buffer.alloc(4096));
      });
      expect((full as { code?: string }).code).toBe('SQLITE_FULL');
      expect(classifySqliteFailure(full)).toBe('full');
    } finally {
      database.close();
    }
  });

  it('the store reports an unexpected constraint as StoreFailureError, with the driver error as cause', async () => {
    const store = createSqliteStore(join(root, 'store.db'));
    try {
      await store.migrate();
      const session = makeSession();
      await store.insertSession(session);
      // A duplicate primary key nobody expected: a bug, not an outage.
      const duplicate = await caught(() => store.insertSession(session));
      expect(duplicate).toBeInstanceOf(StoreFailureError);
      expect(duplicate).not.toBeInstanceOf(StoreUnavailableError);
      expect(((duplicate as Error).cause as { code?: string }).code).toMatch(/^SQLITE_CONSTRAINT/);
    } finally {
      await store.close();
    }
  });
});

const pgAvailable = await postgresAvailable('store error classes on PostgreSQL');

describe.skipIf(!pgAvailable)('PostgreSQL failures by cause (errors raised by real pg)', () => {
  it('a bad statement and a unique violation are internal', async () => {
    const client = new pg.Client({ connectionString: POSTGRES_TEST_URL });
    await client.connect();
    try {
      expect(classifyPostgresFailure(await caught(() => client.query('selec 1')))).toBe('internal');
      await client.query('create temporary table t (id int primary key)');
      await client.query('insert into t values (1)');
      expect(classifyPostgresFailure(await caught(() => client.query('insert into t values (1)')))).toBe('internal');
    } finally {
      await client.end();
    }
  });

  it('a refused connection, a cut link and an administrator shutdown are unavailable', async () => {
    const refused = createPostgresPool('postgres://postgres@127.0.0.1:1/nothing', { poolSize: 1, onConnectionError: () => undefined });
    try {
      expect(classifyPostgresFailure(await caught(() => refused.query('select 1')))).toBe('unavailable');
    } finally {
      await refused.end();
    }

    const target = new URL(POSTGRES_TEST_URL);
    const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    const viaProxy = new URL(POSTGRES_TEST_URL);
    viaProxy.port = String(proxy.port);
    const pool = createPostgresPool(viaProxy.toString(), { poolSize: 1, onConnectionError: () => undefined });
    const admin = new pg.Client({ connectionString: POSTGRES_TEST_URL });
    await admin.connect();
    try {
      // A connection killed by the server (pg_terminate_backend: 57P01 admin_shutdown).
      const client = await pool.connect();
      client.on('error', () => undefined);
      const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
      const hanging = caught(() => client.query('select pg_sleep(30)'));
      await new Promise((resolve) => setTimeout(resolve, 200));
      await admin.query('select pg_terminate_backend($1)', [rows[0]?.pid]);
      const terminated = await hanging;
      client.release(true);
      expect(classifyPostgresFailure(terminated), String(terminated)).toBe('unavailable');

      // A link cut in the middle of a query, then refused while down.
      const second = await pool.connect();
      second.on('error', () => undefined);
      const midQuery = caught(() => second.query('select pg_sleep(30)'));
      await new Promise((resolve) => setTimeout(resolve, 200));
      proxy.cut();
      const cutError = await midQuery;
      second.release(true);
      expect(classifyPostgresFailure(cutError), String(cutError)).toBe('unavailable');
      expect(classifyPostgresFailure(await caught(() => pool.query('select 1')))).toBe('unavailable');
      proxy.restore();
      await expect(pool.query('select 1')).resolves.toBeDefined();
    } finally {
      await admin.end();
      await pool.end();
      await proxy.close();
    }
  });

  it('the store reports a schema bug as StoreFailureError and an outage as StoreUnavailableError', async () => {
    const database = await createTestDatabase();
    const target = new URL(database.url);
    const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    const viaProxy = new URL(database.url);
    viaProxy.port = String(proxy.port);
    const store = createPostgresStore(createPostgresPool(viaProxy.toString(), { poolSize: 2, onConnectionError: () => undefined }));
    try {
      await store.migrate();
      const session = makeSession();
      await store.insertSession(session);
      const duplicate = await caught(() => store.insertSession(session));
      expect(duplicate).toBeInstanceOf(StoreFailureError);
      expect(duplicate).not.toBeInstanceOf(StoreUnavailableError);
      proxy.cut();
      expect(await caught(() => store.findSession('x', new Date()))).toBeInstanceOf(StoreUnavailableError);
      proxy.restore();
      await expect(store.ping()).resolves.toBeUndefined();
    } finally {
      await store.close();
      await proxy.close();
      await database.drop();
    }
  });

  it('disk_full (53100) is full, class 08 and 57P03 are unavailable, syntax errors are internal', () => {
    // SQLSTATEs PostgreSQL cannot be made to raise on demand here (appendix A of its manual).
    const withCode = (code: string) => Object.assign(new Error('x'), { code });
    expect(classifyPostgresFailure(withCode('53100'))).toBe('full');
    expect(classifyPostgresFailure(withCode('08006'))).toBe('unavailable');
    expect(classifyPostgresFailure(withCode('57P03'))).toBe('unavailable');
    expect(classifyPostgresFailure(withCode('42601'))).toBe('internal');
    expect(classifyPostgresFailure(new Error('timeout exceeded when trying to connect'))).toBe('unavailable');
  });
});

