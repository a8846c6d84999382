import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, onTestFinished } from 'vitest';
import { createApp, type App, type AppOverrides, type ListeningPorts } from '../../src/app.js';
import { loadConfig } from '../../src/config/load-config.js';
import { createLogger } from '../../src/observability/logger.js';
import type { MailStore } from '../../src/ports/mail-store.js';
import { MemoryMailStore } from '../../src/storage/memory/memory-mail-store.js';
import { createTestDatabase } from './postgres-test-database.js';

/**
 * The configuration every test app starts from: both listeners on a free loopback port, and
 * no request-rate limits, so that a test's own burst of requests is not refused.
 */
export const TEST_APP_ENV: Readonly<Record<string, string>> = { PORT: '0', SMTP_PORT: '0', HOST: '127.0.0.1', RATE_LIMITS: 'off' };

/** What a test asks of its app; every field has a default. */
export interface TestAppOptions {
  /**
   * Where the app keeps its data: `'memory'` (default) the in-memory fake; `'sqlite'` a real
   * SQLite file in a temporary folder; `'postgres'` a fresh database on the test server
   * (check `postgresAvailable` first); or a store of the test's own (one that fails on demand).
   */
  store?: 'memory' | 'sqlite' | 'postgres' | MailStore;
  /** Configuration variables over TEST_APP_ENV, as the environment would give them (`RATE_LIMITS: 'on'`). */
  env?: Record<string, string>;
  /** Other overrides of createApp: a `FakeClock`, a logger (default: silent), parse-pool settings. */
  overrides?: Omit<AppOverrides, 'store'>;
}

/** A started app and what a test needs around it. */
export interface TestApp {
  readonly app: App;
  readonly httpPort: number;
  readonly smtpPort: number;
  /** The SQLite file of store `'sqlite'`, in a folder removed at teardown; undefined for the other stores. */
  readonly databaseFile: string | undefined;
  /** A new session with a new random inbox, made through `GET /api/create`. */
  newInbox(): Promise<{ cookie: string; email: string; username: string }>;
  /** A read-only connection to the SQLite file of store `'sqlite'`, to count rows; closed at teardown. */
  sqlite(): Database.Database;
  /** Stops the app and removes its data; the teardown calls it too, and later calls do nothing. */
  stop(): Promise<void>;
}

/**
 * Builds and starts an app for the current test, and stops it (removing its files or
 * database) when the test finishes, whether it passed or not. Call it inside a test.
 */
export async function buildTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const testApp = await startTestApp(options);
  onTestFinished(() => testApp.stop());
  return testApp;
}

/**
 * One app for every test of the describe block it is called in (call it in the block's body,
 * not in a test): built before the first test and stopped after the last. Only for tests that
 * each make their own sessions, where an app per test would cost too much (every new app
 * compiles each route's schemas on its first request). Returns the app's accessor for tests.
 */
export function sharedTestApp(options: TestAppOptions = {}): () => TestApp {
  let shared: TestApp | undefined;
  beforeAll(async () => {
    shared = await startTestApp(options);
  });
  afterAll(() => shared?.stop());
  return () => {
    if (shared === undefined) throw new Error('sharedTestApp: the app is there only inside a test');
    return shared;
  };
}

/** Builds and starts the app; if that fails, undoes what it made before it throws. */
async function startTestApp(options: TestAppOptions): Promise<TestApp> {
  const cleanups: Array<() => Promise<void> | void> = [];
  let stopped: Promise<void> | undefined;
  // Undone in reverse order (the app before the file or database it writes to), each step
  // even when an earlier one failed, so that one failure leaves nothing else behind.
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      const errors: unknown[] = [];
      for (const cleanup of cleanups.reverse()) {
        try {
          await cleanup();
        } catch (error) {
          errors.push(error);
        }
      }
      if (errors.length > 0) throw new AggregateError(errors, 'the test app did not stop cleanly');
    })();
    return stopped;
  };

  let app: App;
  let ports: ListeningPorts;
  let databaseFile: string | undefined;
  try {
    const prepared = await prepareStore(options.store ?? 'memory', cleanups);
    databaseFile = prepared.databaseFile;
    const databaseEnv = prepared.databaseUrl === undefined ? {} : { DATABASE_URL: prepared.databaseUrl };
    const config = loadConfig({ ...TEST_APP_ENV, ...databaseEnv, ...options.env });
    const created = await createApp(config, { logger: createLogger('silent'), ...options.overrides, store: prepared.store });
    cleanups.push(() => created.stop());
    app = created;
    ports = await app.start();
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }

  let reader: Database.Database | undefined;
  return {
    app,
    ...ports,
    databaseFile,
    async newInbox() {
      const created = await app.http.inject({ method: 'GET', url: '/api/create' });
      if (created.statusCode !== 200) throw new Error(`GET /api/create answered ${created.statusCode}: ${created.body}`);
      const { email, username } = created.json<{ email: string; username: string }>();
      return { cookie: String(created.headers['set-cookie']).split(';')[0] ?? '', email, username };
    },
    sqlite() {
      if (databaseFile === undefined) throw new Error("sqlite() needs store: 'sqlite'");
      if (reader === undefined) {
        const opened = new Database(databaseFile, { readonly: true, fileMustExist: true });
        cleanups.push(() => void opened.close());
        reader = opened;
      }
      return reader;
    },
    stop,
  };
}

/** The DATABASE_URL or store override of a store option; what it creates is undone by `cleanups`. */
async function prepareStore(
  option: NonNullable<TestAppOptions['store']>,
  cleanups: Array<() => Promise<void> | void>,
): Promise<{ databaseUrl?: string; databaseFile?: string; store?: MailStore }> {
  if (option === 'memory') return { store: new MemoryMailStore() };
  if (option === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'tempinbox-test-app-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const databaseFile = join(dir, 'tempinbox.db');
    return { databaseUrl: `sqlite:${databaseFile}`, databaseFile };
  }
  if (option === 'postgres') {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    return { databaseUrl: database.url };
  }
  return { store: option };
}
