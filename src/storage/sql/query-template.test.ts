import BetterSqlite3 from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from './database.js';
import { sqliteDialect } from './dialect.js';
import { createMigrationProvider } from './migrations.js';
import { QueryTemplate } from './query-template.js';

const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: new BetterSqlite3(':memory:') }) });

beforeAll(async () => {
  const { error } = await new Migrator({ db, provider: createMigrationProvider(sqliteDialect) }).migrateToLatest();
  if (error !== undefined) throw error;
  for (const [n, expires] of [[1, 100], [2, 200], [3, 300]] as const) {
    await db.insertInto('sessions').values({ id: `s${n}`, token_hash: `h${n}`, created_at: 0, expires_at: expires, license_id: n === 3 ? 'L' : null }).execute();
  }
});
afterAll(() => db.destroy());

describe('QueryTemplate', () => {
  const byHash = new QueryTemplate(2, (k, hash: string, now: number) =>
    k.selectFrom('sessions').select('id').where('token_hash', '=', hash).where('expires_at', '>', now),
  );

  it('runs with new arguments each time, as the builder would', async () => {
    expect(await byHash.execute(db, 'h1', 50)).toEqual([{ id: 's1' }]);
    expect(await byHash.execute(db, 'h1', 150)).toEqual([]);
    expect(await byHash.execute(db, 'h2', 150)).toEqual([{ id: 's2' }]);
  });

  it('fills an argument used twice in every place, and keeps constants of the query', async () => {
    const twice = new QueryTemplate(1, (k, hash: string) =>
      k.selectFrom('sessions').select('id').where((eb) => eb.or([eb('token_hash', '=', hash), eb('id', '=', hash)])).where('expires_at', '>', 150),
    );
    expect(await twice.execute(db, 'h2')).toEqual([{ id: 's2' }]);
    expect(await twice.execute(db, 's3')).toEqual([{ id: 's3' }]);
    expect(await twice.execute(db, 'h1')).toEqual([]);
  });

  it('refuses a template where an argument is not a bound parameter', async () => {
    const inlined = new QueryTemplate(1, (k, id: string) => k.selectFrom('sessions').select('id').where(sql<boolean>`id = ${sql.lit(id)}`));
    await expect(inlined.execute(db, 's1')).rejects.toThrow(/argument 0 is not a bound parameter/);
  });
});
