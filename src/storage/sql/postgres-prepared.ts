import type { PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type pg from 'pg';

/**
 * Most SQL texts run as named prepared statements per connection: the store's fixed set (the
 * hot templates of hot-queries.ts and the delivery statements of postgres-delivery.ts, about
 * twenty) with room to spare. A text past it runs unnamed, as any other query: the bound keeps
 * a bug that registered texts varying with list lengths from filling the server's memory with
 * plans, one set per pooled connection.
 */
export const MAX_PREPARED_STATEMENTS = 64;

/**
 * The SQL texts that run as named prepared statements on PostgreSQL (pg's `{ name, text,
 * values }`): each connection parses and plans such a text once, then only binds and executes
 * it (docs/benchmarks.md "PostgreSQL"). Only fixed texts are added: never one whose text varies
 * with its arguments (list lengths), which would prepare without end.
 */
export class PreparedStatements {
  private readonly names = new Map<string, string>();

  /** Marks `text` to run prepared; a no-op for a text already added or past MAX_PREPARED_STATEMENTS. */
  add(text: string): void {
    if (this.names.has(text) || this.names.size >= MAX_PREPARED_STATEMENTS) return;
    this.names.set(text, `tempinbox_${this.names.size + 1}`);
  }

  /** The statement name of `text`, or undefined when it runs unnamed. */
  nameOf(text: string): string | undefined {
    return this.names.get(text);
  }

  /** How many texts are prepared (tests). */
  get size(): number {
    return this.names.size;
  }
}

/** SQLSTATE 0A000 feature_not_supported: "cached plan must not change result type". */
const CACHED_PLAN_CHANGED = '0A000';

/** A pooled pg client whose named statements have gone stale (see runPrepared); released with an error, so the pool closes it. */
const stale = new WeakSet<pg.PoolClient>();

/**
 * Runs `text` on `client`, as a named prepared statement when `statements` has it. A prepared
 * `select *` whose table gained a column (a migration applied by another node during a rolling
 * upgrade) fails with "cached plan must not change result type" on this connection from then
 * on: the query is run again unnamed, and the connection is marked to be closed on release
 * (releaseClient), so the next one prepares the new shape.
 */
export async function runPrepared<R extends object>(
  client: pg.PoolClient,
  statements: PreparedStatements,
  text: string,
  values: readonly unknown[],
): Promise<pg.QueryResult<R>> {
  const name = statements.nameOf(text);
  if (name === undefined) return client.query<R>(text, [...values]);
  try {
    return await client.query<R>({ name, text, values: [...values] });
  } catch (error) {
    if (typeof error !== 'object' || error === null || (error as { code?: unknown }).code !== CACHED_PLAN_CHANGED) throw error;
    stale.add(client);
    return client.query<R>(text, [...values]);
  }
}

/** Gives `client` back to its pool; one whose prepared statements went stale is closed instead. */
export function releaseClient(client: pg.PoolClient, error?: Error): void {
  if (error === undefined && stale.has(client)) client.release(new Error('its prepared statements are stale'));
  else client.release(error);
}

/**
 * `pool` as Kysely's PostgresDialect takes it, with every query of a registered text run as a
 * named prepared statement (runPrepared). Everything else passes through unchanged.
 */
export function preparingPool(pool: pg.Pool, statements: PreparedStatements): PostgresPool {
  return {
    connect: async (): Promise<PostgresPoolClient> => {
      const client = await pool.connect();
      // Kysely keeps one wrapper per client object (a WeakMap): hand back the same one each time.
      let wrapper = wrappers.get(client);
      if (wrapper === undefined) {
        wrapper = wrap(client, statements);
        wrappers.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => pool.end(),
  };
}

const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();

function wrap(client: pg.PoolClient, statements: PreparedStatements): PostgresPoolClient {
  function query<R>(sql: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>>;
  function query(cursor: Parameters<PostgresPoolClient['query']>[0] & object): never;
  function query<R>(sql: unknown, parameters?: readonly unknown[]): Promise<PostgresQueryResult<R>> {
    // The store streams nothing (no cursor in its dialect config): only texts come here.
    if (typeof sql !== 'string') throw new Error('cursors are not supported by the preparing pool');
    return runPrepared(client, statements, sql, parameters ?? []) as unknown as Promise<PostgresQueryResult<R>>;
  }
  return { query, release: () => releaseClient(client) };
}
