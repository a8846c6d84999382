import { dirname, resolve } from 'node:path';
import type pg from 'pg';
import { UNLIMITED_CAPACITY, type StorageCapacity } from '../ports/storage-capacity.js';
import { DiskSpaceMonitor } from './disk-space-monitor.js';
import { createPostgresPool, createPostgresStore } from './sql/postgres-store.js';
import type { SqlMailStore } from './sql/sql-mail-store.js';
import { createSqliteStore } from './sql/sqlite-store.js';

/**
 * The store a DATABASE_URL names, the PostgreSQL pool behind it (shared fair-use counters),
 * and the capacity check of its disk.
 */
export type OpenedStore =
  | { kind: 'sqlite'; store: SqlMailStore; capacity: StorageCapacity }
  | { kind: 'postgres'; store: SqlMailStore; pool: pg.Pool; capacity: StorageCapacity };

/** Settings of the PostgreSQL backend; SQLite ignores them. */
export interface OpenStoreOptions {
  /** DATABASE_POOL_SIZE. */
  poolSize: number;
  /** A PostgreSQL connection failed outside any query; the process goes on. */
  onConnectionError: (error: Error) => void;
  /** MIN_FREE_DISK_BYTES (SQLite files only; 0 = no watermark). */
  minFreeDiskBytes: number;
  /** A free-space reading failed; the last answer stands. */
  onCapacityError: (error: unknown) => void;
}

/**
 * Opens the store a DATABASE_URL names: `sqlite:<path>` / `sqlite::memory:` embedded, or
 * `postgres://…` / `postgresql://…` through a pool. Nothing connects to PostgreSQL before the
 * first query (migrate() at start), so an unreachable server fails there.
 */
export function openStore(databaseUrl: string, options: OpenStoreOptions): OpenedStore {
  if (databaseUrl.startsWith('sqlite:')) {
    const path = databaseUrl.slice('sqlite:'.length);
    const store = createSqliteStore(path);
    const onDisk = path !== ':memory:' && path !== '';
    const capacity =
      onDisk && options.minFreeDiskBytes > 0
        ? new DiskSpaceMonitor({ path: dirname(resolve(path)), minFreeBytes: options.minFreeDiskBytes, onError: options.onCapacityError })
        : UNLIMITED_CAPACITY;
    return { kind: 'sqlite', store, capacity };
  }
  if (!/^postgres(ql)?:\/\//.test(databaseUrl)) throw new Error('DATABASE_URL must start with sqlite:, postgres:// or postgresql://');
  const pool = createPostgresPool(databaseUrl, options);
  // The watermark is SQLite's: a PostgreSQL server's disk is not this process's to watch.
  return { kind: 'postgres', store: createPostgresStore(pool), pool, capacity: UNLIMITED_CAPACITY };
}
