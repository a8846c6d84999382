import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The server the PostgreSQL tests use (.ci/run exports it; the same default on dev machines). */
export const POSTGRES_TEST_URL = process.env.TEMPINBOX_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** In CI a missing server fails the run instead of skipping (.ci/run sets it). */
export const POSTGRES_REQUIRED = process.env.TEMPINBOX_REQUIRE_POSTGRES === '1';

/** A fresh database of its own for one test file. */
export interface TestDatabase {
  /** Its name (tempinbox_test_<random>). */
  name: string;
  /** A connection URL to it. */
  url: string;
  /** Drops it, ending other sessions still connected to it (a server killed mid-test). */
  drop: () => Promise<void>;
}

/** The admin URL with another database name (and the same user, host and options). */
export function urlForDatabase(name: string, base = POSTGRES_TEST_URL): string {
  const url = new URL(base);
  url.pathname = `/${name}`;
  return url.toString();
}

async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_TEST_URL, connectionTimeoutMillis: 3000 });
  // An admin connection that breaks is reported by its query; the event alone must not crash the worker.
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Null when the test server answers; otherwise why not. */
export async function postgresUnavailableReason(): Promise<string | null> {
  try {
    await withAdmin((client) => client.query('select 1'));
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * Whether this file's PostgreSQL tests run. When the server cannot be reached: in CI
 * (TEMPINBOX_REQUIRE_POSTGRES=1) throws, so the file fails loudly; elsewhere prints one plain
 * line saying the tests were skipped and why, and returns false (use with describe.skipIf).
 */
export async function postgresAvailable(what: string): Promise<boolean> {
  const reason = await postgresUnavailableReason();
  if (reason === null) return true;
  const message = `PostgreSQL tests skipped (${what}): cannot reach ${redact(POSTGRES_TEST_URL)}: ${reason}. Start PostgreSQL or set TEMPINBOX_TEST_POSTGRES_URL.`;
  if (POSTGRES_REQUIRED) throw new Error(`${message.replace('skipped', 'FAILED')} TEMPINBOX_REQUIRE_POSTGRES=1 requires them.`);
  console.warn(message);
  return false;
}

/** Creates an empty database with a random name on the test server. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `tempinbox_test_${randomBytes(6).toString('hex')}`;
  await withAdmin((client) => client.query(`create database ${name}`));
  return {
    name,
    url: urlForDatabase(name),
    drop: () => withAdmin(async (client) => void (await client.query(`drop database if exists ${name} with (force)`))),
  };
}

/** The URL without its password, for messages. */
function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparsable URL)';
  }
}
