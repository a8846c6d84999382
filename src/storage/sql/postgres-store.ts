import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './database.js';
import { postgresDialect } from './dialect.js';
import { prepareDeliveryStatements, writePostgresDeliveryGroup } from './postgres-delivery.js';
import { PreparedStatements, preparingPool } from './postgres-prepared.js';
import { SqlMailStore } from './sql-mail-store.js';

/**
 * A new connection that takes longer fails: requests answer 503 in seconds while the
 * database is unreachable instead of hanging until the client gives up.
 */
export const POSTGRES_CONNECT_TIMEOUT_MS = 5000;
/**
 * Client-side bound on one query. Our statements are short (bounded batches); a query this
 * slow means the server is gone without the socket saying so (a dropped route, a frozen
 * host), and the request gets its 503 instead of waiting for TCP to notice.
 */
export const POSTGRES_QUERY_TIMEOUT_MS = 30_000;
/** Idle pooled connections are closed after this, so a quiet node holds few server slots. */
const IDLE_TIMEOUT_MS = 30_000;

/** What a PostgreSQL pool needs besides the URL. */
export interface PostgresPoolOptions {
  /** Most connections this process opens (DATABASE_POOL_SIZE). */
  poolSize: number;
  /** A connection failed outside any query (server restart, network cut); logged, never fatal. */
  onConnectionError: (error: Error) => void;
}

/**
 * A pg pool for the store and the shared fair-use counters. Connection failures are errors
 * of the operation that meets them (StoreUnavailableError → 503 / 451), never of the process:
 * an idle connection that dies emits 'error' on the pool, and a connection checked out
 * between two queries emits it on the client; both are handled here, because an unhandled
 * 'error' event would crash the process when the database goes away.
 */
export function createPostgresPool(url: string, options: PostgresPoolOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize,
    connectionTimeoutMillis: POSTGRES_CONNECT_TIMEOUT_MS,
    query_timeout: POSTGRES_QUERY_TIMEOUT_MS,
    idleTimeoutMillis: IDLE_TIMEOUT_MS,
    // TCP keepalive notices a vanished server on idle connections.
    keepAlive: true,
    application_name: 'tempinbox',
  });
  pool.on('connect', (client) => {
    client.on('error', (error) => options.onConnectionError(error));
  });
  // The pool re-emits an idle client's error, which the listener above has reported already.
  pool.on('error', () => undefined);
  return pool;
}

/**
 * A MailStore on PostgreSQL through `pool`; call migrate() before use. close() ends the pool.
 * Deliveries are group-committed, a group per transaction with few round trips
 * (postgres-delivery.ts); they and the hot queries of polls and RCPT run as named prepared
 * statements (postgres-prepared.ts). docs/benchmarks.md "PostgreSQL" has what each bought.
 */
export function createPostgresStore(pool: pg.Pool): SqlMailStore {
  const statements = new PreparedStatements();
  prepareDeliveryStatements(statements);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparingPool(pool, statements) }) });
  return new SqlMailStore(db, postgresDialect, {
    groupCreates: false,
    writeMessageGroup: (group) => writePostgresDeliveryGroup(pool, statements, group),
    prepare: (sql) => statements.add(sql),
    // One round trip per poll instead of three (docs/architecture.md "One statement per poll").
    pollStatement: true,
  });
}
