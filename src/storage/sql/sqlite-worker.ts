/**
 * The SQLite writer thread (docs/architecture.md "SQLite off the event loop"): owns the store's
 * writing better-sqlite3 connection and runs its statements, BEGIN/COMMIT/ROLLBACK and so
 * every fsync, so the event loop never waits for a commit (single SELECTs run on a read-only
 * connection on the main thread, sqlite-reader.ts). sqlite-worker-driver.ts is the other end.
 * Started with workerData.tempinboxSqlite; imported anywhere else it only exports its helpers.
 *
 * Self-contained on purpose (only node: modules, better-sqlite3, type-only imports of our own
 * and sqlite-delivery.ts, imported by its `.ts` name): under vitest and tsx the .ts file runs
 * with Node's own type stripping, which does not map `.js` import specifiers to `.ts`
 * sources, and starts in milliseconds.
 */
import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { isMainThread, parentPort, workerData, type MessagePort } from 'node:worker_threads';
import BetterSqlite3 from 'better-sqlite3';
import { writeDeliveryGroup } from './sqlite-delivery.ts';
import type { SerializedError, WorkerInit, WorkerReply, WorkerRequest, WorkerStart } from './sqlite-worker-protocol.js';

/** Wait this long for another process's write lock (e.g. the CLI while the server runs). */
export const SQLITE_BUSY_TIMEOUT_MS = 5000;

/**
 * Prepared statements kept by the thread. Kysely prepares every query afresh; our queries
 * are a few dozen fixed SQL texts, so caching them saves a parse per call on the hot path.
 */
export const STATEMENT_CACHE_SIZE = 256;

/**
 * Opens (creating the file and its folder when needed) a better-sqlite3 database with the
 * settings the product's guarantees rest on. Throws better-sqlite3's own error.
 */
export function openDatabaseFile(path: string): BetterSqlite3.Database {
  const inMemory = path === ':memory:' || path === '';
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
}

/**
 * Opens a read-only connection to a database the writer has opened (so the file exists and is
 * in WAL mode, which a read-only connection cannot set): the store's reader (sqlite-reader.ts).
 */
export function openReadOnlyFile(path: string): BetterSqlite3.Database {
  const database = new BetterSqlite3(path, { readonly: true, fileMustExist: true, timeout: SQLITE_BUSY_TIMEOUT_MS });
  try {
    database.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
    return database;
  } catch (error) {
    database.close();
    throw error;
  }
}

/**
 * Creates `dir` and its missing parents, one level at a time. Not `mkdirSync(dir, {recursive:
 * true})`: on a file system that refuses the new entry with ENOENT although its parent exists
 * (e.g. `/proc/nope`), Node's recursive mkdir retries forever at 100 % CPU, blocking the
 * thread so that not even SIGTERM is handled. Here every level is tried once, and the
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

/** An error as plain data: structured clone keeps neither `code` nor the class. */
function serializeError(error: unknown): SerializedError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  const code = (error as { code?: unknown }).code;
  return { name: error.name, message: error.message, stack: error.stack, code: typeof code === 'string' ? code : undefined };
}

/** The statement for `text`, prepared once (bounded cache, oldest evicted first). */
export function statementCache(database: BetterSqlite3.Database): (text: string) => BetterSqlite3.Statement {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return (text) => {
    const cached = cache.get(text);
    if (cached !== undefined) return cached;
    const statement = database.prepare(text);
    if (cache.size >= STATEMENT_CACHE_SIZE) {
      const oldest = cache.keys().next();
      if (oldest.done !== true) cache.delete(oldest.value);
    }
    cache.set(text, statement);
    return statement;
  };
}

/** Parameters arrive as Uint8Array (structured clone drops Buffer's class); SQLite binds Buffers. */
function toBindable(parameters: readonly unknown[]): unknown[] {
  return parameters.map((value) =>
    value instanceof Uint8Array && !Buffer.isBuffer(value) ? Buffer.from(value.buffer, value.byteOffset, value.byteLength) : value,
  );
}

/**
 * The ArrayBuffers of the blobs in `rows` that can move to the main thread instead of being
 * copied: those the blob owns whole (better-sqlite3 allocates one per blob value).
 */
function movableBuffers(rows: readonly unknown[]): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  for (const row of rows) {
    if (typeof row !== 'object' || row === null) continue;
    for (const value of Object.values(row)) {
      if (value instanceof Uint8Array && value.buffer instanceof ArrayBuffer && value.byteOffset === 0 && value.byteLength === value.buffer.byteLength) {
        buffers.add(value.buffer);
      }
    }
  }
  return [...buffers];
}

/** Serves the driver's requests on `port` until it asks to close. */
function serve(database: BetterSqlite3.Database, port: MessagePort): void {
  const prepare = statementCache(database);
  const reply = (message: WorkerReply, transfer: ArrayBuffer[] = []): void => {
    try {
      port.postMessage(message, transfer);
    } catch {
      // A buffer that cannot move (e.g. one Node marked untransferable) is copied instead.
      port.postMessage(message);
    }
  };
  port.on('message', (request: WorkerRequest) => {
    try {
      switch (request.op) {
        case 'query': {
          const statement = prepare(request.sql);
          const parameters = toBindable(request.parameters);
          if (statement.reader) {
            const rows = statement.all(parameters) as unknown[];
            reply({ id: request.id, ok: true, rows }, movableBuffers(rows));
            return;
          }
          const { changes, lastInsertRowid } = statement.run(parameters);
          reply({ id: request.id, ok: true, rows: [], numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid) });
          return;
        }
        case 'deliver': {
          // A whole group of deliveries in one transaction: one hop instead of one per statement.
          const outcomes = writeDeliveryGroup(database, prepare, request.deliveries);
          reply({ id: request.id, ok: true, rows: [], outcomes });
          return;
        }
        case 'rollback':
          // SQLite may already have rolled back by itself (see sqlite-worker-driver.ts).
          if (database.inTransaction) database.exec('rollback');
          reply({ id: request.id, ok: true, rows: [] });
          return;
        case 'close':
          database.close();
          reply({ id: request.id, ok: true, rows: [] });
          port.close();
          return;
      }
    } catch (error) {
      reply({ id: request.id, ok: false, error: serializeError(error) });
    }
  });
}

/** Opens the database and reports the outcome to the waiting main thread (see WorkerStart). */
function start(data: WorkerStart, port: MessagePort): void {
  let database: BetterSqlite3.Database;
  try {
    database = openDatabaseFile(data.path);
  } catch (error) {
    data.initPort.postMessage({ ok: false, error: serializeError(error) } satisfies WorkerInit);
    Atomics.store(data.signal, 0, 1);
    Atomics.notify(data.signal, 0);
    port.close();
    return;
  }
  data.initPort.postMessage({ ok: true } satisfies WorkerInit);
  data.initPort.close();
  Atomics.store(data.signal, 0, 1);
  Atomics.notify(data.signal, 0);
  serve(database, port);
}

const started = workerData as { tempinboxSqlite?: WorkerStart } | null;
if (!isMainThread && parentPort !== null && started?.tempinboxSqlite !== undefined) start(started.tempinboxSqlite, parentPort);
