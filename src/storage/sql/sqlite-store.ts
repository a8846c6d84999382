import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import {
  CompiledQuery,
  Kysely,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type Driver,
  type SqliteDatabase,
  type SqliteDialectConfig,
  type SqliteStatement,
} from 'kysely';
import { StoreUnavailableError } from '../../ports/mail-store.js';
import type { Database } from './database.js';
import { sqliteDialect } from './dialect.js';
import { SqlMailStore } from './sql-mail-store.js';

/** Wait this long for another process's write lock (e.g. the CLI while the server runs). */
export const SQLITE_BUSY_TIMEOUT_MS = 5000;

/**
 * Prepared statements kept per connection. Kysely prepares every query afresh; our queries
 * are a few dozen fixed SQL texts, so caching them saves a parse per call on the hot path.
 */
const STATEMENT_CACHE_SIZE = 256;

/**
 * Opens (creating the file and its folder when needed) a better-sqlite3 database with the
 * settings the product's guarantees rest on.
 */
export function openSqliteDatabase(path: string): BetterSqlite3.Database {
  const inMemory = path === ':memory:' || path === '';
  try {
    if (!inMemory) ensureDirectory(dirname(path));
    const database = new BetterSqlite3(path, { timeout: SQLITE_BUSY_TIMEOUT_MS });
    try {
      // WAL: readers never block the writer, and a commit is one sequential append.
      database.pragma('journal_mode = WAL');
      // FULL: a commit is fsynced before it returns, so a message answered 250 survives
      // kill -9 and power loss (NORMAL in WAL mode may lose the last commits on power loss).
      database.pragma('synchronous = FULL');
      database.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
      // Off by default in SQLite; messages and attachments reference their parents.
      database.pragma('foreign_keys = ON');
      return database;
    } catch (error) {
      database.close();
      throw error;
    }
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new StoreUnavailableError(`cannot open SQLite database ${path}: ${reason}`, { cause: error });
  }
}

/**
 * Creates `dir` and its missing parents, one level at a time. Not `mkdirSync(dir, {recursive:
 * true})`: on a file system that refuses the new entry with ENOENT although its parent exists
 * (e.g. `/proc/nope`), Node's recursive mkdir retries forever at 100 % CPU, blocking the
 * event loop so that not even SIGTERM is handled. Here every level is tried once, and the
 * recursion is as deep as the path has components.
 */
function ensureDirectory(dir: string): void {
  try {
    if (statSync(dir).isDirectory()) return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    const parent = dirname(dir);
    if (parent !== dir) ensureDirectory(parent);
    try {
      mkdirSync(dir);
    } catch (mkdirError) {
      // Made meanwhile by another process starting on the same file: fine.
      if ((mkdirError as NodeJS.ErrnoException).code !== 'EEXIST') throw mkdirError;
    }
    return;
  }
  // A file where the folder should be: SQLite's open would fail with a vaguer message.
  throw new Error(`${dir} is not a directory`);
}

/** A MailStore on a SQLite file (or ':memory:'); call migrate() before use. */
export function createSqliteStore(path: string): SqlMailStore {
  const database = openSqliteDatabase(path);
  const db = new Kysely<Database>({
    dialect: new ImmediateSqliteDialect({ database: withStatementCache(database) }, () => database.inTransaction),
  });
  return new SqlMailStore(db, sqliteDialect, { groupCommit: true });
}

/**
 * Every transaction of the store writes, so it starts with BEGIN IMMEDIATE: a deferred BEGIN
 * that reads first and then writes fails at once with SQLITE_BUSY when another process wrote
 * in between, without waiting for busy_timeout.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  constructor(
    config: SqliteDialectConfig,
    private readonly inTransaction: () => boolean,
  ) {
    super(config);
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  /**
   * SQLite rolls a transaction back by itself after SQLITE_FULL, SQLITE_IOERR, SQLITE_BUSY or
   * SQLITE_NOMEM (https://sqlite.org/lang_transaction.html, "Response To Errors Within A
   * Transaction"). Kysely's ROLLBACK would then fail with "cannot rollback - no transaction is
   * active", and that error would replace the one that matters: a full disk would read as a bug.
   */
  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (!this.inTransaction()) return;
    await super.rollbackTransaction(connection);
  }
}

/** Kysely's SQLite dialect with ImmediateSqliteDriver. */
class ImmediateSqliteDialect extends SqliteDialect {
  constructor(
    private readonly config: SqliteDialectConfig,
    private readonly inTransaction: () => boolean,
  ) {
    super(config);
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.config, this.inTransaction);
  }
}

/** Wraps the database so prepare() reuses statements (bounded, oldest evicted first). */
function withStatementCache(database: BetterSqlite3.Database): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => {
      cache.clear();
      database.close();
    },
    prepare: (text) => {
      const cached = cache.get(text);
      if (cached !== undefined) return cached;
      const statement = database.prepare(text);
      if (cache.size >= STATEMENT_CACHE_SIZE) {
        const oldest = cache.keys().next();
        if (oldest.done !== true) cache.delete(oldest.value);
      }
      cache.set(text, statement);
      return statement;
    },
  };
}
