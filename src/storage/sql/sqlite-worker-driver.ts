import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import {
  CompiledQuery,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
} from 'kysely';
import { WORKER_YOUNG_GENERATION_MB } from '../../runtime-flags.js';
import type { MessageDelivery } from './message-writes.js';
import { toWireDeliveries, type WireOutcomes } from './sqlite-delivery.js';
import type { SerializedError, WorkerInit, WorkerReply, WorkerRequest, WorkerStart } from './sqlite-worker-protocol.js';

/**
 * Longest wait for the SQLite thread to open the database at start. Opening takes
 * milliseconds; the bound only keeps a wedged file system (or a stuck thread start) from
 * hanging start-up forever. It exceeds SQLITE_BUSY_TIMEOUT_MS, the wait for another
 * process's lock that setting WAL mode may need.
 */
export const SQLITE_OPEN_TIMEOUT_MS = 30_000;

/** The database could not be opened; `cause` is SQLite's error (with its code) when it gave one. */
export class SqliteOpenError extends Error {
  override readonly name = 'SqliteOpenError';
}

/**
 * Where the thread's code is: the compiled .js next to this file; under tsx or vitest
 * (running the .ts sources) the .ts file, which Node runs with its own type stripping.
 */
function workerUrl(): URL {
  return new URL(import.meta.url.endsWith('.ts') ? './sqlite-worker.ts' : './sqlite-worker.js', import.meta.url);
}

/** An error of the thread again as an Error, with SQLite's `code` for the classifier in dialect.ts. */
function revive(serialized: SerializedError): Error {
  const error = new Error(serialized.message) as Error & { code?: string };
  error.name = serialized.name;
  if (serialized.code !== undefined) error.code = serialized.code;
  if (serialized.stack !== undefined) error.stack = `${serialized.stack}\n    at (SQLite thread)`;
  return error;
}

/** Blobs arrive as Uint8Array (structured clone drops Buffer's class): Buffers again, no copy. */
function reviveBlobs(rows: unknown[]): unknown[] {
  for (const row of rows) {
    if (typeof row !== 'object' || row === null) continue;
    const record = row as Record<string, unknown>;
    for (const key in record) {
      const value = record[key];
      if (value instanceof Uint8Array && !Buffer.isBuffer(value)) record[key] = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    }
  }
  return rows;
}

interface Pending {
  resolve: (reply: WorkerReply & { ok: true }) => void;
  reject: (error: Error) => void;
}

/**
 * The main thread's end of the SQLite thread: sends requests, matches the replies. The
 * thread keeps the process alive only while a request is outstanding, so an idle store never
 * holds a CLI command open; close() ends it.
 */
export class SqliteThread {
  /**
   * Who holds the writer connection: a Kysely transaction from BEGIN to COMMIT/ROLLBACK, a
   * single writing statement, or a group of deliveries. The thread serves requests in order,
   * so without it another caller's statement could land inside an open transaction.
   */
  readonly lock = new ConnectionMutex();
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private gone: Error | undefined;

  /**
   * Starts the thread and waits (blocking, once at start) until it has opened `path`, so that
   * a database that cannot be opened fails here, synchronously, as it always has.
   */
  constructor(path: string) {
    const signal = new Int32Array(new SharedArrayBuffer(4));
    const init = new MessageChannel();
    const start: WorkerStart = { path, signal, initPort: init.port2 };
    this.worker = new Worker(workerUrl(), {
      workerData: { tempinboxSqlite: start },
      transferList: [init.port2],
      // Its garbage is a group's rows and messages, gone within the group: a small young
      // generation, whatever flags the process was started with (src/runtime-flags.ts).
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
    });
    const waited = Atomics.wait(signal, 0, 0, SQLITE_OPEN_TIMEOUT_MS);
    const outcome = receiveMessageOnPort(init.port1)?.message as WorkerInit | undefined;
    init.port1.close();
    if (waited === 'timed-out' || outcome === undefined || !outcome.ok) {
      void this.worker.terminate();
      const cause = outcome !== undefined && !outcome.ok ? revive(outcome.error) : undefined;
      throw new SqliteOpenError(cause?.message ?? `the SQLite thread did not open the database within ${SQLITE_OPEN_TIMEOUT_MS} ms`, { cause });
    }
    this.worker.unref();
    this.worker.on('message', (reply: WorkerReply) => this.settle(reply));
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', (code) => this.fail(new Error(`the SQLite thread exited (code ${code})`)));
  }

  /** Runs one statement in the thread. */
  async query(sql: string, parameters: readonly unknown[]): Promise<QueryResult<unknown>> {
    const reply = await this.send({ id: 0, op: 'query', sql, parameters });
    const rows = reviveBlobs(reply.rows);
    return reply.numAffectedRows === undefined ? { rows } : { rows, numAffectedRows: reply.numAffectedRows, insertId: reply.insertId };
  }

  /**
   * Writes a group of deliveries in one transaction of the thread (sqlite-delivery.ts), in one
   * message each way; resolves once it is committed, with the outcomes in the given order.
   * Takes the writer for itself, like a transaction.
   */
  async deliver(deliveries: readonly MessageDelivery[]): Promise<WireOutcomes[]> {
    const wire = toWireDeliveries(deliveries);
    await this.lock.lock();
    try {
      const reply = await this.send({ id: 0, op: 'deliver', deliveries: wire });
      return reply.outcomes ?? [];
    } finally {
      this.lock.unlock();
    }
  }

  /** Rolls back the open transaction, if SQLite has not already done so itself. */
  async rollback(): Promise<void> {
    await this.send({ id: 0, op: 'rollback' });
  }

  /** Closes the database and ends the thread (after every request sent before). */
  async close(): Promise<void> {
    if (this.gone === undefined) {
      try {
        await this.send({ id: 0, op: 'close' });
      } finally {
        this.gone ??= new Error('the SQLite store is closed');
        await this.worker.terminate();
      }
    }
  }

  private send(request: WorkerRequest): Promise<WorkerReply & { ok: true }> {
    if (this.gone !== undefined) return Promise.reject(this.gone);
    const id = (this.nextId += 1);
    return new Promise((resolve, reject) => {
      if (this.pending.size === 0) this.worker.ref();
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...request, id });
    });
  }

  private settle(reply: WorkerReply): void {
    const waiting = this.pending.get(reply.id);
    if (waiting === undefined) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.worker.unref();
    if (reply.ok) waiting.resolve(reply);
    else waiting.reject(revive(reply.error));
  }

  private fail(error: Error): void {
    this.gone ??= error;
    for (const waiting of this.pending.values()) waiting.reject(error);
    this.pending.clear();
  }
}

/** Where single SELECTs outside a transaction go (SqliteReader). */
export interface SqliteReadConnection {
  query(sql: string, parameters: readonly unknown[]): Promise<QueryResult<unknown>>;
  close(): Promise<void>;
}

/**
 * A statement the reader may run: a plain SELECT cannot write (SQLite's WITH may lead into an
 * INSERT, UPDATE or DELETE, so only `select …` qualifies).
 */
const READ_ONLY_STATEMENT = /^\s*select\s/i;

/**
 * One use of the database Kysely asked for: a transaction (it then holds the writer) or
 * single statements (each takes the writer for itself, or goes to the reader).
 */
class ThreadConnection implements DatabaseConnection {
  /** True while this connection holds the writer for a transaction. */
  holdsWriter = false;

  constructor(private readonly driver: ThreadDriver) {}

  executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    return this.driver.execute(this, compiledQuery.sql, compiledQuery.parameters) as Promise<QueryResult<R>>;
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('the SQLite thread driver does not stream');
  }
}

/** Hands SQLite's one writer connection to one user at a time, as Kysely's own SqliteDriver does. */
class ConnectionMutex {
  private locked: Promise<void> | undefined;
  private release: (() => void) | undefined;

  async lock(): Promise<void> {
    while (this.locked !== undefined) await this.locked;
    this.locked = new Promise((resolve) => {
      this.release = resolve;
    });
  }

  unlock(): void {
    const release = this.release;
    this.locked = undefined;
    this.release = undefined;
    release?.();
  }
}

/**
 * Kysely's driver on the SQLite threads. A transaction holds the writer (mutex) from BEGIN to
 * COMMIT/ROLLBACK, so its statements never interleave with anyone else's and every atomic
 * store operation stays atomic. A single SELECT outside a transaction goes to the reader when
 * there is one (a read-only connection: WAL lets it read the last commit while the writer
 * writes or fsyncs), without waiting for the writer; any other single statement takes the
 * writer for itself. Every transaction of the store writes, so it starts with BEGIN
 * IMMEDIATE: a deferred BEGIN that reads first and then writes fails at once with SQLITE_BUSY
 * when another process wrote in between, without waiting for busy_timeout.
 */
class ThreadDriver implements Driver {
  constructor(
    private readonly writer: SqliteThread,
    private readonly reader: SqliteReadConnection | undefined,
  ) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return new ThreadConnection(this);
  }

  /** Runs one statement where it belongs (see the class comment). */
  async execute(connection: ThreadConnection, sql: string, parameters: readonly unknown[]): Promise<QueryResult<unknown>> {
    if (connection.holdsWriter) return this.writer.query(sql, parameters);
    if (this.reader !== undefined && READ_ONLY_STATEMENT.test(sql)) return this.reader.query(sql, parameters);
    await this.writer.lock.lock();
    try {
      return await this.writer.query(sql, parameters);
    } finally {
      this.writer.lock.unlock();
    }
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await this.writer.lock.lock();
    (connection as ThreadConnection).holdsWriter = true;
    // A failed BEGIN is not rolled back by Kysely: releaseConnection frees the writer then.
    await this.writer.query('begin immediate', []);
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    // A failed COMMIT is followed by Kysely's rollbackTransaction, which frees the writer.
    await this.writer.query('commit', []);
    this.free(connection as ThreadConnection);
  }

  /**
   * SQLite rolls a transaction back by itself after SQLITE_FULL, SQLITE_IOERR, SQLITE_BUSY or
   * SQLITE_NOMEM (https://sqlite.org/lang_transaction.html, "Response To Errors Within A
   * Transaction"). A plain ROLLBACK would then fail with "cannot rollback - no transaction is
   * active", and that error would replace the one that matters: a full disk would read as a
   * bug. The thread rolls back only a transaction that is still open.
   */
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      await this.writer.rollback();
    } finally {
      this.free(connection as ThreadConnection);
    }
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    this.free(connection as ThreadConnection);
  }

  async destroy(): Promise<void> {
    await Promise.all([this.writer.close(), this.reader?.close()]);
  }

  private free(connection: ThreadConnection): void {
    if (!connection.holdsWriter) return;
    connection.holdsWriter = false;
    this.writer.lock.unlock();
  }
}

/**
 * Kysely's SQLite dialect on a writer SqliteThread and, optionally, a read-only connection for
 * the single SELECTs (a file only: a second connection to `:memory:` is another, empty database).
 */
export class SqliteThreadDialect implements Dialect {
  constructor(
    private readonly writer: SqliteThread,
    private readonly reader?: SqliteReadConnection,
  ) {}

  createDriver(): Driver {
    return new ThreadDriver(this.writer, this.reader);
  }

  createQueryCompiler(): QueryCompiler {
    return new SqliteQueryCompiler();
  }

  createAdapter(): DialectAdapter {
    return new SqliteAdapter();
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- Kysely's own signature.
  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new SqliteIntrospector(db);
  }
}
