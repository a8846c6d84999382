import type BetterSqlite3 from 'better-sqlite3';
import type { QueryResult } from 'kysely';
import { openReadOnlyFile, statementCache } from './sqlite-worker.js';

/**
 * The store's read-only SQLite connection, on the main thread: single SELECTs outside a
 * transaction (docs/architecture.md "SQLite off the event loop"). In WAL mode it reads the
 * last commit without waiting for the writer thread's transaction or fsync, and an indexed
 * read costs tens of microseconds, less than the two thread hops it would take in a worker
 * (measured in docs/benchmarks.md "SQLite off the event loop").
 */
export class SqliteReader {
  private readonly database: BetterSqlite3.Database;
  private readonly prepare: (text: string) => BetterSqlite3.Statement;

  /** Opens `path`, which the writer thread has already opened (and set to WAL). */
  constructor(path: string) {
    this.database = openReadOnlyFile(path);
    this.prepare = statementCache(this.database);
  }

  /** Runs one SELECT. */
  query(sql: string, parameters: readonly unknown[]): Promise<QueryResult<unknown>> {
    try {
      return Promise.resolve({ rows: this.prepare(sql).all(parameters as unknown[]) });
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  /** Closes the connection. */
  close(): Promise<void> {
    this.database.close();
    return Promise.resolve();
  }
}
