import { sql, type ColumnDataType, type ColumnDefinitionBuilder, type CreateTableBuilder, type Expression, type RawBuilder } from 'kysely';

/** The SQL backends SqlMailStore runs on. */
export type SqlDialectName = 'sqlite' | 'postgres';

/**
 * Everything that differs between the backends. The store and the migrations use only these
 * knobs; all other SQL is written once and runs unchanged on SQLite and PostgreSQL.
 */
export interface SqlDialect {
  readonly name: SqlDialectName;
  /** Epoch-millisecond timestamps need 64 bits: year 9999 (the postmaster inbox) overflows int4. */
  readonly millisType: ColumnDataType;
  /** Raw messages and attachment bytes. */
  readonly blobType: ColumnDataType;
  /** Type of messages.seq, the ordering key behind `since`. */
  readonly seqType: ColumnDataType;
  /** Makes messages.seq a primary key the database numbers in insertion order. */
  seqColumn(column: ColumnDefinitionBuilder): ColumnDefinitionBuilder;
  /**
   * Whether SELECT … FOR UPDATE / FOR SHARE / SKIP LOCKED exist. PostgreSQL needs them to
   * keep concurrent writers (several nodes) from racing; SQLite has no row locks but admits
   * one writer at a time (every transaction is BEGIN IMMEDIATE), which already serialises.
   */
  readonly rowLocks: boolean;
  /** True when `error` is the driver's unique/primary-key violation. */
  isUniqueViolation(error: unknown): boolean;
  /**
   * True when the whole operation may simply run again: the database aborted it to break a
   * deadlock or a serialisation conflict, and nothing of it was committed.
   */
  isRetryable(error: unknown): boolean;
  /**
   * What a failed operation means (docs/api.md "Errors"): `unavailable` when the database
   * cannot be reached (retry later: 503 / 451 4.3.0), `full` when its disk is full (452 4.3.1),
   * `internal` for everything else: a bug of ours, never reported as an outage.
   */
  classifyFailure(error: unknown): StoreFailureKind;
  /**
   * Marks a table whose rows may be lost in a crash (fair-use counters): on PostgreSQL an
   * UNLOGGED table, whose writes skip the WAL and so never wait for an fsync.
   */
  ephemeralTable<TB extends string, C extends string>(table: CreateTableBuilder<TB, C>): CreateTableBuilder<TB, C>;
  /**
   * Where `part` first occurs in `text` (from 1; 0 when it does not; 1 for ''): a plain
   * substring search, no pattern to backtrack through (LIKE '%…%' cost up to 0.5 ms per
   * 2,000-character value on SQLite; docs/benchmarks.md "Filters").
   */
  position(text: Expression<string | null>, part: Expression<string>): RawBuilder<number>;
}

/** The three causes a store failure is reported by. */
export type StoreFailureKind = 'unavailable' | 'full' | 'internal';

function errorCode(error: unknown): unknown {
  return typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
}

/** SQLite through better-sqlite3. */
export const sqliteDialect: SqlDialect = {
  name: 'sqlite',
  // SQLite integers are 64-bit whatever the declared name.
  millisType: 'integer',
  blobType: 'blob',
  seqType: 'integer',
  // AUTOINCREMENT: never reuse the number of a deleted newest message, so seq only grows.
  seqColumn: (column) => column.primaryKey().autoIncrement(),
  rowLocks: false,
  isUniqueViolation: (error) => {
    const code = errorCode(error);
    return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
  },
  // One writer at a time (BEGIN IMMEDIATE + busy_timeout): no deadlocks to retry.
  isRetryable: () => false,
  classifyFailure: classifySqliteFailure,
  // Every SQLite table is equally durable; the table is unused on one node anyway.
  ephemeralTable: (table) => table,
  position: (text, part) => sql<number>`instr(${text}, ${part})`,
};

/**
 * PostgreSQL through pg. Its int8 columns come back as strings unless the pool parses them;
 * the store converts with Number() either way.
 */
export const postgresDialect: SqlDialect = {
  name: 'postgres',
  millisType: 'bigint',
  blobType: 'bytea',
  seqType: 'bigint',
  seqColumn: (column) => column.primaryKey().generatedAlwaysAsIdentity(),
  rowLocks: true,
  // 23505 = unique_violation (PostgreSQL error codes, appendix A).
  isUniqueViolation: (error) => errorCode(error) === '23505',
  // 40P01 = deadlock_detected, 40001 = serialization_failure: the transaction was rolled back.
  isRetryable: (error) => {
    const code = errorCode(error);
    return code === '40P01' || code === '40001';
  },
  classifyFailure: classifyPostgresFailure,
  ephemeralTable: (table) => table.modifyFront(sql`unlogged`),
  position: (text, part) => sql<number>`strpos(${text}, ${part})`,
};

/**
 * SQLite result codes (https://sqlite.org/rescode.html) meaning the file cannot be used right
 * now: it cannot be opened, the disk or file system failed (every SQLITE_IOERR_* extended
 * code), another process holds the write lock past busy_timeout, or the file became read-only
 * (a file system remounted read-only).
 */
const SQLITE_UNAVAILABLE = /^SQLITE_(CANTOPEN|IOERR|BUSY|READONLY)(_|$)/;

/** SQLite: SQLITE_FULL is a full disk; open, I/O and lock failures are an outage; the rest is ours. */
export function classifySqliteFailure(error: unknown): StoreFailureKind {
  const code = errorCode(error);
  if (typeof code !== 'string') return 'internal';
  // SQLITE_FULL: the write failed for lack of space (SQLite maps ENOSPC to it).
  if (code === 'SQLITE_FULL') return 'full';
  return SQLITE_UNAVAILABLE.test(code) ? 'unavailable' : 'internal';
}

/**
 * Node socket errors of a connection that could not be made or broke: the server is down,
 * restarting, or the network between us is cut.
 */
const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * pg and pg-pool raise these without a code when the connection is lost or never made
 * (pg/lib/client.js, pg-pool/index.js): a broken socket, the pool's connect timeout, the
 * client-side query timeout (POSTGRES_QUERY_TIMEOUT_MS), a client whose connection died.
 */
const PG_CONNECTION_MESSAGES = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect$/,
  /^timeout expired$/,
  /^Query read timeout$/,
  /^Client has encountered a connection error and is not queryable$/,
  /^Client was closed and is not queryable$/,
];

/**
 * PostgreSQL: SQLSTATE 53100 disk_full is a full disk; class 08 (connection exception),
 * 57P01-57P03 (admin/crash shutdown, cannot connect now: a restart), 53300
 * too_many_connections and socket or pool failures are an outage; the rest is ours
 * (PostgreSQL error codes, appendix A).
 */
export function classifyPostgresFailure(error: unknown): StoreFailureKind {
  const code = errorCode(error);
  if (code === '53100') return 'full';
  if (typeof code === 'string' && (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300')) {
    return 'unavailable';
  }
  if (typeof code === 'string' && NETWORK_ERROR_CODES.has(code)) return 'unavailable';
  const message = error instanceof Error ? error.message : '';
  if (PG_CONNECTION_MESSAGES.some((pattern) => pattern.test(message))) return 'unavailable';
  // pg-pool wraps the socket error of a failed connect (`cause`); AggregateError carries one per address tried.
  if (error instanceof AggregateError) return error.errors.some((inner) => classifyPostgresFailure(inner) === 'unavailable') ? 'unavailable' : 'internal';
  if (error instanceof Error && error.cause !== undefined && error.cause !== error) return classifyPostgresFailure(error.cause) === 'unavailable' ? 'unavailable' : 'internal';
  return 'internal';
}
