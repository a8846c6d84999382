import { sql, type ColumnDataType, type ColumnDefinitionBuilder, type CreateTableBuilder } from 'kysely';

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
   * Marks a table whose rows may be lost in a crash (fair-use counters): on PostgreSQL an
   * UNLOGGED table, whose writes skip the WAL and so never wait for an fsync.
   */
  ephemeralTable<TB extends string, C extends string>(table: CreateTableBuilder<TB, C>): CreateTableBuilder<TB, C>;
}

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
  // Every SQLite table is equally durable; the table is unused on one node anyway.
  ephemeralTable: (table) => table,
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
  ephemeralTable: (table) => table.modifyFront(sql`unlogged`),
};
