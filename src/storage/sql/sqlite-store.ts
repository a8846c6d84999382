import type BetterSqlite3 from 'better-sqlite3';
import { Kysely } from 'kysely';
import { StoreUnavailableError } from '../../ports/mail-store.js';
import type { Database } from './database.js';
import { sqliteDialect } from './dialect.js';
import { SqlMailStore } from './sql-mail-store.js';
import { SqliteReader } from './sqlite-reader.js';
import { SqliteOpenError, SqliteThread, SqliteThreadDialect } from './sqlite-worker-driver.js';
import { openDatabaseFile } from './sqlite-worker.js';

export { SQLITE_BUSY_TIMEOUT_MS } from './sqlite-worker.js';

/** The error a database that cannot be opened is reported as (an outage: 503 / 451 4.3.0). */
function unavailable(path: string, error: unknown): StoreUnavailableError {
  const cause = error instanceof SqliteOpenError && error.cause !== undefined ? error.cause : error;
  const reason = error instanceof Error ? error.message : String(error);
  return new StoreUnavailableError(`cannot open SQLite database ${path}: ${reason}`, { cause });
}

/**
 * Opens (creating the file and its folder when needed) a better-sqlite3 database on this
 * thread with the settings the product's guarantees rest on (the store's own connection is
 * opened the same way, in its thread).
 */
export function openSqliteDatabase(path: string): BetterSqlite3.Database {
  try {
    return openDatabaseFile(path);
  } catch (error) {
    throw unavailable(path, error);
  }
}

/**
 * A MailStore on a SQLite file (or ':memory:', which lives as long as the store); call
 * migrate() before use. Its writing connection runs in a thread of its own (sqlite-worker.ts),
 * so statements, commits and their fsyncs never block the event loop; single SELECTs run on a
 * read-only connection here (SqliteReader), never waiting for a commit (WAL). close() ends both.
 */
export function createSqliteStore(path: string): SqlMailStore {
  const inMemory = path === ':memory:' || path === '';
  let writer: SqliteThread;
  let reader: SqliteReader | undefined;
  try {
    writer = new SqliteThread(path);
  } catch (error) {
    throw unavailable(path, error);
  }
  try {
    // A second connection to ':memory:' would be another, empty database: the writer reads too.
    reader = inMemory ? undefined : new SqliteReader(path);
  } catch (error) {
    void writer.close();
    throw unavailable(path, error);
  }
  const db = new Kysely<Database>({ dialect: new SqliteThreadDialect(writer, reader) });
  // Deliveries go to the writer thread in one message per group (sqlite-delivery.ts).
  return new SqlMailStore(db, sqliteDialect, {
    writeMessageGroup: (group) => writer.deliver(group),
    closeConnections: async () => {
      await Promise.all([writer.close(), reader?.close()]);
    },
  });
}
