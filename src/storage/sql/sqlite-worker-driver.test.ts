import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { classifySqliteFailure } from './dialect.js';
import { SqliteReader } from './sqlite-reader.js';
import { SqliteThread, SqliteThreadDialect } from './sqlite-worker-driver.js';

const root = mkdtempSync(join(tmpdir(), 'tempinbox-sqlite-thread-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let files = 0;
const freshPath = (): string => join(root, `t-${(files += 1)}.db`);

/** A Kysely on a SQLite thread; untyped tables: these tests make their own. */
function threadDb(path: string): Kysely<Record<string, Record<string, unknown>>> {
  return new Kysely({ dialect: new SqliteThreadDialect(new SqliteThread(path)) });
}

/** A statement that keeps SQLite busy for a while (counts through a recursive CTE). */
const SLOW_QUERY = sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < 3000000) select count(*) as c from n`;

/** Longest gap between timer ticks (every 5 ms) while `work` runs. */
async function longestTimerGap(work: () => Promise<unknown>): Promise<number> {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 5);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  // The gap still open when the work ends counts too (a blocked loop never ticked at all).
  return Math.max(longest, performance.now() - last);
}

describe('SqliteThread: SQLite in a worker thread behind Kysely', () => {
  it('keeps the event loop turning while a statement runs (the same statement in-thread blocks it)', async () => {
    const path = freshPath();
    // Control: Kysely's own driver on an in-thread connection blocks the loop for the whole statement.
    const inThread = new Kysely<Record<string, never>>({ dialect: new SqliteDialect({ database: new BetterSqlite3(path) }) });
    const started = performance.now();
    const blocked = await longestTimerGap(() => SLOW_QUERY.execute(inThread));
    const statementMs = performance.now() - started;
    await inThread.destroy();
    expect(blocked).toBeGreaterThan(statementMs * 0.8);

    const db = threadDb(path);
    try {
      let result: unknown;
      const gap = await longestTimerGap(async () => {
        result = (await SLOW_QUERY.execute(db)).rows;
      });
      expect(result).toEqual([{ c: 3000000 }]);
      // The timer kept ticking: its worst gap is a small part of the statement's time
      // (a generous bound for a loaded machine; blocked, the gap is the whole statement).
      expect(gap).toBeLessThan(Math.max(statementMs * 0.5, 50));
    } finally {
      await db.destroy();
    }
  });

  it('returns blobs as Buffers, byte-exact, and takes Buffers as parameters', async () => {
    const db = threadDb(freshPath());
    try {
      await sql`create table t (id integer primary key, data blob)`.execute(db);
      const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
      const inserted = await db.insertInto('t').values({ id: 1, data: bytes }).executeTakeFirst();
      expect(inserted.insertId).toBe(1n);
      expect(inserted.numInsertedOrUpdatedRows).toBe(1n);
      const row = await db.selectFrom('t').select('data').where('id', '=', 1).executeTakeFirstOrThrow();
      expect(Buffer.isBuffer(row.data)).toBe(true);
      expect((row.data as Buffer).equals(bytes)).toBe(true);
      // The caller's buffer was copied, not moved: it is still whole.
      expect(bytes.byteLength).toBe(256);
    } finally {
      await db.destroy();
    }
  });

  it('keeps the SQLite code of an error, and a full database inside a transaction reads as SQLITE_FULL', async () => {
    const db = threadDb(freshPath());
    try {
      const bad = await sql`selec 1`.execute(db).catch((error: unknown) => error);
      expect((bad as { code?: string }).code).toBe('SQLITE_ERROR');
      expect(classifySqliteFailure(bad)).toBe('internal');

      await sql`create table t (v blob)`.execute(db);
      // max_page_count makes SQLite answer SQLITE_FULL exactly as on a full disk; SQLite
      // then rolls the transaction back by itself, and Kysely's ROLLBACK must not replace
      // the error with "no transaction is active".
      await sql`pragma max_page_count = 8`.execute(db);
      const full = await db
        .transaction()
        .execute(async (trx) => {
          for (let i = 0; i < 100; i += 1) await trx.insertInto('t').values({ v: Buffer.alloc(4096) }).execute();
        })
        .catch((error: unknown) => error);
      expect((full as { code?: string }).code).toBe('SQLITE_FULL');
      expect(classifySqliteFailure(full)).toBe('full');
      // The connection is usable again, outside any transaction.
      await expect(db.selectFrom('t').select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow()).resolves.toEqual({ n: 0 });
    } finally {
      await db.destroy();
    }
  });

  it('keeps an in-memory database as long as the thread lives', async () => {
    const db = threadDb(':memory:');
    try {
      await sql`create table t (v integer)`.execute(db);
      await sql`insert into t values (7)`.execute(db);
      expect((await sql<{ v: number }>`select v from t`.execute(db)).rows).toEqual([{ v: 7 }]);
    } finally {
      await db.destroy();
    }
  });

  it('serialises transactions: concurrent read-modify-write transactions lose no update', async () => {
    const db = threadDb(freshPath());
    try {
      await sql`create table c (n integer)`.execute(db);
      await sql`insert into c values (0)`.execute(db);
      await Promise.all(
        Array.from({ length: 20 }, () =>
          db.transaction().execute(async (trx) => {
            const { n } = await trx.selectFrom('c').select('n').executeTakeFirstOrThrow();
            await new Promise((resolve) => setImmediate(resolve));
            await trx.updateTable('c').set({ n: (n as number) + 1 }).execute();
          }),
        ),
      );
      expect((await sql<{ n: number }>`select n from c`.execute(db)).rows).toEqual([{ n: 20 }]);
    } finally {
      await db.destroy();
    }
  });

  it('fails queries after close instead of hanging, and opening a folder fails at once', async () => {
    const db = threadDb(freshPath());
    await sql`select 1`.execute(db);
    await db.destroy();
    const thread = new SqliteThread(freshPath());
    await thread.close();
    await expect(thread.query('select 1', [])).rejects.toThrow(/closed/);
    expect(() => new SqliteThread(root)).toThrow(/unable to open|directory/i);
  });

  it('answers a single SELECT from the reader with the last commit while a transaction holds the writer', async () => {
    const path = freshPath();
    const writer = new SqliteThread(path);
    const db = new Kysely<Record<string, Record<string, unknown>>>({ dialect: new SqliteThreadDialect(writer, new SqliteReader(path)) });
    try {
      await sql`create table t (v integer)`.execute(db);
      await db.insertInto('t').values({ v: 1 }).execute();
      let release: () => void = () => undefined;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const transaction = db.transaction().execute(async (trx) => {
        await trx.insertInto('t').values({ v: 2 }).execute();
        await held;
      });
      // The writer is held by the open transaction: the read neither waits for it nor sees its row.
      await new Promise((resolve) => setTimeout(resolve, 50));
      const during = await Promise.race([
        db.selectFrom('t').select('v').orderBy('v').execute(),
        new Promise((resolve) => setTimeout(() => resolve('waited for the writer'), 2000)),
      ]);
      expect(during).toEqual([{ v: 1 }]);
      release();
      await transaction;
      // Committed: the next read sees it.
      expect(await db.selectFrom('t').select('v').orderBy('v').execute()).toEqual([{ v: 1 }, { v: 2 }]);
    } finally {
      await db.destroy();
    }
  });
});
