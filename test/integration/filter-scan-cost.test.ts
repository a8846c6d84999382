import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setImmediate } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import type { MailStore } from '../../src/ports/mail-store.js';
import { createPostgresPool, createPostgresStore } from '../../src/storage/sql/postgres-store.js';
import { createSqliteStore } from '../../src/storage/sql/sqlite-store.js';
import { addInbox, makeMail, openPolicy } from '../contract/mail-store-fixtures.js';
import { createTestDatabase, postgresAvailable } from '../helpers/postgres-test-database.js';
import { listMessageIds } from '../helpers/store-reads.js';

const postgres = await postgresAvailable('filter cost');

/** The attacked inbox: a Premium inbox's 1,000 messages. */
const MESSAGES = 1000;
/** A From of 2,000 characters (what the parser keeps), all one letter: a substring search's worst case. */
const FROM = `${'a'.repeat(2000 - ' <s@example.org>'.length)} <s@example.org>`;
/** 320-character filters (the longest accepted) that match everywhere but their last character. */
const NEAR_MISS = `${'a'.repeat(319)}b`;
/** Filtered checks measured. */
const CHECKS = 10;
/**
 * CPU of this process per filtered check, at most: half of what docs/api.md allows any
 * event-loop stretch (100 ms), so no part of a check can come near it, whatever the machine's
 * load. Measured: 3-7 ms on SQLite (whose reads run on this thread);
 * `lower(from_header) LIKE '%…%'` cost 300-510 ms, in one statement.
 */
const CHECK_CPU_LIMIT_MS = 50;
/** What docs/api.md promises every other client: an answer within this. */
const REQUEST_BOUND_MS = 100;
/**
 * The longest event-loop delay allowed while the checks run: one turn may be late by what a
 * 2-core machine shared with other test runs costs (147 ms seen under a load average of 24);
 * the old single statement held the loop 3.2 s.
 */
const LOOP_DELAY_LIMIT_MS = 1000;

/** Fills a fresh inbox with MESSAGES messages whose From is FROM; returns its id. */
async function fill(store: MailStore): Promise<string> {
  const inbox = await addInbox(store);
  for (let start = 0; start < MESSAGES; start += 100) {
    await Promise.all(
      Array.from({ length: 100 }, (_, i) => store.insertMessage(makeMail({ from: FROM, subject: `${'a'.repeat(400)} ${start + i}` }), [inbox.id], openPolicy())),
    );
  }
  return inbox.id;
}

/**
 * Runs CHECKS filtered checks with near misses one after another (a turn of the event loop
 * between them, as between two requests), measuring this process's CPU and its event-loop
 * delay (monitorEventLoopDelay, 1 ms resolution).
 */
async function measureChecks(store: MailStore, inboxId: string) {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const cpu = process.cpuUsage();
  const started = performance.now();
  const found: string[] = [];
  for (let i = 0; i < CHECKS; i += 1) {
    const filter = i % 2 === 0 ? { from: NEAR_MISS } : { from: 'a'.repeat(320), subject: `${'a'.repeat(319)}z` };
    found.push(...(await listMessageIds(store, inboxId, { limit: 101, filter })).ids);
    await setImmediate();
  }
  const used = process.cpuUsage(cpu);
  delay.disable();
  return {
    found,
    cpuMsPerCheck: (used.user + used.system) / 1000 / CHECKS,
    wallMsPerCheck: (performance.now() - started) / CHECKS,
    loopDelayMaxMs: delay.max / 1e6,
  };
}

describe('the cost of a filtered check of 1,000 messages with 2,000-character From headers', () => {
  const root = mkdtempSync(join(tmpdir(), 'tempinbox-filter-cost-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('SQLite (reads on this thread): a few milliseconds of CPU, and no long event-loop stretch', async () => {
    const store = createSqliteStore(join(root, 'filters.db'));
    try {
      await store.migrate();
      const inboxId = await fill(store);
      const measured = await measureChecks(store, inboxId);
      console.log(`filter-scan-cost sqlite: ${JSON.stringify({ ...measured, found: measured.found.length })}`);
      expect(measured.found).toEqual([]);
      expect(measured.cpuMsPerCheck).toBeLessThan(CHECK_CPU_LIMIT_MS);
      expect(measured.loopDelayMaxMs).toBeLessThan(LOOP_DELAY_LIMIT_MS);
    } finally {
      await store.close();
    }
  }, 120_000);

  it.skipIf(!postgres)('PostgreSQL: the database answers a check within the bound (22 ms measured; LIKE took 1.7 s)', async () => {
    const database = await createTestDatabase();
    const store = createPostgresStore(createPostgresPool(database.url, { poolSize: 4, onConnectionError: () => undefined }));
    try {
      await store.migrate();
      const inboxId = await fill(store);
      const measured = await measureChecks(store, inboxId);
      console.log(`filter-scan-cost postgres: ${JSON.stringify({ ...measured, found: measured.found.length })}`);
      expect(measured.found).toEqual([]);
      // The database's time, which every other client of the database shares; the event loop
      // only waits for it.
      expect(measured.wallMsPerCheck).toBeLessThan(REQUEST_BOUND_MS);
    } finally {
      await store.close();
      await database.drop();
    }
  }, 120_000);
});
