import type pg from 'pg';
import { createPostgresPool, createPostgresStore } from './sql/postgres-store.js';
import type { SqlMailStore } from './sql/sql-mail-store.js';
import { createSqliteStore } from './sql/sqlite-store.js';

/** The store a DATABASE_URL names, and the PostgreSQL pool behind it (shared fair-use counters). */
export type OpenedStore = { kind: 'sqlite'; store: SqlMailStore } | { kind: 'postgres'; store: SqlMailStore; pool: pg.Pool };

/** Settings of the PostgreSQL backend; SQLite ignores them. */
export interface OpenStoreOptions {
  /** DATABASE_POOL_SIZE. */
  poolSize: number;
  /** A PostgreSQL connection failed outside any query; the process goes on. */
  onConnectionError: (error: Error) => void;
}

/**
 * Opens the store a DATABASE_URL names: `sqlite:<path>` / `sqlite::memory:` embedded, or
 * `postgres://…` / `postgresql://…` through a pool. Nothing connects to PostgreSQL before the
 * first query (migrate() at start), so an unreachable server fails there.
 */
export function openStore(databaseUrl: string, options: OpenStoreOptions): OpenedStore {
  if (databaseUrl.startsWith('sqlite:')) {
    return { kind: 'sqlite', store: createSqliteStore(databaseUrl.slice('sqlite:'.length)) };
  }
  if (!/^postgres(ql)?:\/\//.test(databaseUrl)) throw new Error('DATABASE_URL must start with sqlite:, postgres:// or postgresql://');
  const pool = createPostgresPool(databaseUrl, options);
  return { kind: 'postgres', store: createPostgresStore(pool), pool };
}
