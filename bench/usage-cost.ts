/**
 * `npx tsx bench/usage-cost.ts delivery|sweep sqlite|postgres [count] [trigger]`: what an
 * inbox's usage costs (docs/decisions/0016-inbox-usage-counters.md), on the store in this process
 * (no SMTP, no MIME parsing: the part that depends on what an inbox holds).
 *
 * - `delivery [held=5000]`: a premium inbox holding `held` messages of 4 KB; then, one after
 *   the other, the RCPT TO check (DeliveryService.acceptRecipient: the inbox and its usage) and
 *   the store of one more 4 KB message under the quota, DELIVERIES times; the same for an empty
 *   inbox. CPU per delivery, RCPT check and store apart.
 * - `sweep [messages=20000]`: expired inboxes of MESSAGES_PER_EXPIRED_INBOX messages each,
 *   deleted by deleteExpired(now, SWEEP_BATCH_SIZE) calls until none is left: CPU per deleted
 *   message and wall time per transaction step. `trigger` first installs a row trigger on
 *   messages that keeps the counters on delete, as the SQL-trigger design would (docs/decisions/0016-inbox-usage-counters.md
 *   says why it was not chosen); needs the 0005-inbox-usage columns.
 *
 * CPU is this process's (process.cpuUsage: every thread, so on SQLite the writer thread too)
 * and, on PostgreSQL, the server backend's (/proc/<pid>/stat of the one connection the
 * measured store uses; 10 ms ticks, hence the counts). PostgreSQL: TEMPINBOX_BENCH_POSTGRES_URL
 * (default postgres://postgres@127.0.0.1:5432/postgres) names the server; a scratch database is
 * created and dropped. Runs on any commit that has DeliveryService and the store (before and
 * after the counters), so the same file measures both.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { newId } from '../src/domain/ids.js';
import type { PlanSettings } from '../src/domain/plan.js';
import type { NewMessage } from '../src/domain/types.js';
import type { MailStore, StorePolicy } from '../src/ports/mail-store.js';
import { DeliveryService } from '../src/services/delivery-service.js';
import { SWEEP_BATCH_SIZE } from '../src/services/sweep-service.js';
import { SWEEP_MESSAGES_PER_TRANSACTION } from '../src/storage/sql/deletions.js';
import { createPostgresPool, createPostgresStore } from '../src/storage/sql/postgres-store.js';
import { createSqliteStore } from '../src/storage/sql/sqlite-store.js';
import { createScratchDatabase } from './postgres-bench-db.js';
import { cpuSeconds } from './process-stats.js';

const mode = process.argv[2] ?? 'delivery';
const backend = process.argv[3] ?? 'sqlite';
const count = Number(process.argv[4] ?? (mode === 'sweep' ? 20_000 : 5000));
const withTrigger = process.argv[5] === 'trigger';
/** Deliveries measured per inbox: ~10 ms CPU ticks of the PostgreSQL backend need a few hundred. */
const DELIVERIES = 400;
/** Messages per expired inbox in the sweep (bench/sweeper-figure.ts uses 10 too). */
const MESSAGES_PER_EXPIRED_INBOX = 10;
/** Stores at once while filling: one SQLite group commit, or that many PostgreSQL transactions. */
const FILL_CONCURRENCY = 64;
const DOMAIN = 'tempinbox.test';
const POSTGRES_URL = process.env.TEMPINBOX_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** A 4 KB message, parsed as the store takes it. */
function message(receivedAt: Date, size = 4096): NewMessage {
  const raw = new TextEncoder().encode(`Subject: bench\r\n\r\n${'x'.repeat(size - 20)}\r\n`);
  const parsed = { from: 'a@bench.example', to: `x@${DOMAIN}`, subject: 'bench', text: 'x', html: null, headers: [], messageId: null, attachments: [], codes: [], links: [] };
  return { envelopeFrom: 'a@bench.example', parsed, raw, receivedAt };
}

/** One backend opened twice: the store measured (one connection on PostgreSQL) and one to fill it. */
interface Bench {
  store: MailStore;
  filler: MailStore;
  /**
   * A reader of the CPU seconds of the database server's work for `store` (0 on SQLite: it
   * runs in this process). Asked anew before each measurement: an idle pool may have replaced
   * its connection while the filler worked.
   */
  serverCpu: () => Promise<() => number>;
  /** Runs SQL on the database outside the stores (the trigger). */
  exec: (sqlText: string) => Promise<void>;
  close: () => Promise<void>;
}

async function openBench(): Promise<Bench> {
  if (backend === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'tempinbox-usage-'));
    const path = join(dir, 'tempinbox.db');
    const store = createSqliteStore(path);
    await store.migrate();
    return {
      store,
      filler: store,
      serverCpu: () => Promise.resolve(() => 0),
      exec: (sqlText) => {
        const db = new BetterSqlite3(path);
        try {
          db.exec(sqlText);
        } finally {
          db.close();
        }
        return Promise.resolve();
      },
      close: async () => {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const scratch = await createScratchDatabase(POSTGRES_URL);
  const quiet = { onConnectionError: () => undefined };
  const pool = createPostgresPool(scratch.url, { poolSize: 1, ...quiet });
  const store = createPostgresStore(pool);
  await store.migrate();
  const filler = createPostgresStore(createPostgresPool(scratch.url, { poolSize: 10, ...quiet }));
  return {
    store,
    filler,
    // The pool of one keeps its one connection while it is used: its backend does the store's work.
    serverCpu: async () => {
      const pid = Number((await pool.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]?.pid);
      return () => cpuSeconds(pid);
    },
    exec: async (sqlText) => {
      const client = new pg.Client({ connectionString: scratch.url });
      await client.connect();
      try {
        await client.query(sqlText);
      } finally {
        await client.end();
      }
    },
    close: async () => {
      await store.close();
      await filler.close();
      await scratch.drop();
    },
  };
}

/** Stores `total` messages, FILL_CONCURRENCY at a time, each to the inbox `inboxOf(n)` picks. */
async function fill(store: MailStore, total: number, inboxOf: (n: number) => string, policy: StorePolicy): Promise<void> {
  for (let n = 0; n < total; n += FILL_CONCURRENCY) {
    const batch = Array.from({ length: Math.min(FILL_CONCURRENCY, total - n) }, (_, i) => store.insertMessage(message(policy.now), [inboxOf(n + i)], policy));
    await Promise.all(batch);
  }
}

/** CPU (µs) of this process and of the server while `work` runs. */
async function measure(bench: Bench, work: () => Promise<void>): Promise<{ local: number; server: number }> {
  const serverCpu = await bench.serverCpu();
  const local = process.cpuUsage();
  const server = serverCpu();
  await work();
  const used = process.cpuUsage(local);
  return { local: used.user + used.system, server: (serverCpu() - server) * 1e6 };
}

async function deliveryCost(bench: Bench): Promise<void> {
  const now = new Date();
  const plan: PlanSettings = {
    freeTtlSeconds: 3600,
    premiumTtlSeconds: 86_400,
    premiumMaxInboxes: 10,
    freeMaxMessages: 100,
    premiumMaxMessages: count + 2 * DELIVERIES + 1,
    freeMaxBytes: 1024 ** 3,
    premiumMaxBytes: 1024 ** 4,
  };
  const policy: StorePolicy = {
    now,
    free: { maxMessages: plan.freeMaxMessages, maxBytes: plan.freeMaxBytes },
    premium: { maxMessages: plan.premiumMaxMessages, maxBytes: plan.premiumMaxBytes },
  };
  const delivery = new DeliveryService({
    store: bench.store,
    clock: { now: () => now },
    parse: () => Promise.reject(new Error('not parsed here')),
    domains: [DOMAIN],
    plan,
  });
  const expiresAt = new Date(now.getTime() + 86_400_000);
  for (const held of [count, 0]) {
    const username = `held${held}`;
    const inbox = { id: newId(), username, domain: DOMAIN, createdAt: now, expiresAt, sessionId: null, licenseId: 'bench-license' };
    await bench.store.insertInbox(inbox, now);
    await fill(bench.filler, held, () => inbox.id, policy);
    const address = `${username}@${DOMAIN}`;
    // Warm-up: statement caches, JIT.
    for (let i = 0; i < 20; i += 1) await delivery.acceptRecipient(address, 0);
    const rcpt = await measure(bench, async () => {
      for (let i = 0; i < DELIVERIES; i += 1) await delivery.acceptRecipient(address, 0);
    });
    const store = await measure(bench, async () => {
      for (let i = 0; i < DELIVERIES; i += 1) await bench.store.insertMessage(message(now), [inbox.id], policy);
    });
    const us = (cpu: { local: number; server: number }) =>
      backend === 'sqlite' ? `${(cpu.local / DELIVERIES).toFixed(0)} µs` : `${(cpu.local / DELIVERIES).toFixed(0)} + ${(cpu.server / DELIVERIES).toFixed(0)} µs (node + server)`;
    const both = { local: rcpt.local + store.local, server: rcpt.server + store.server };
    console.log(`${backend}: inbox holding ${held} messages: per delivery ${us(both)}; RCPT check ${us(rcpt)}, store ${us(store)} (${DELIVERIES} each)`);
  }
}

/** The SQL-trigger design, for the sweep's comparison: each deleted copy updates its inbox's counters. */
const TRIGGER_SQL: Record<string, string> = {
  sqlite: `create trigger messages_usage_on_delete after delete on messages begin
             update inboxes set message_count = message_count - 1,
               byte_count = byte_count - (select size from contents where id = old.content_id)
             where id = old.inbox_id;
           end`,
  postgres: `create function messages_usage_on_delete() returns trigger language plpgsql as $$
             begin
               update inboxes set message_count = message_count - 1,
                 byte_count = byte_count - (select size from contents where id = old.content_id)
               where id = old.inbox_id;
               return null;
             end $$;
             create trigger messages_usage_on_delete after delete on messages
               for each row execute function messages_usage_on_delete();`,
};

async function sweepCost(bench: Bench): Promise<void> {
  const created = new Date(Date.now() - 7_200_000);
  const expiresAt = new Date(created.getTime() + 60_000);
  const inboxes = Math.ceil(count / MESSAGES_PER_EXPIRED_INBOX);
  const ids: string[] = [];
  for (let i = 0; i < inboxes; i += 1) {
    const inbox = { id: newId(), username: `exp${i}`, domain: DOMAIN, createdAt: created, expiresAt, sessionId: null, licenseId: null };
    await bench.filler.insertInbox(inbox, created);
    ids.push(inbox.id);
  }
  const open = { maxMessages: 1_000_000, maxBytes: 1024 ** 4 };
  await fill(bench.filler, inboxes * MESSAGES_PER_EXPIRED_INBOX, (n) => ids[Math.floor(n / MESSAGES_PER_EXPIRED_INBOX)] ?? '', { now: created, free: open, premium: open });
  const trigger = TRIGGER_SQL[backend];
  if (withTrigger && trigger !== undefined) await bench.exec(trigger);
  const now = new Date();
  let deleted = 0;
  let calls = 0;
  let slowest = 0;
  const cpu = await measure(bench, async () => {
    for (;;) {
      const started = performance.now();
      const counts = await bench.store.deleteExpired(now, SWEEP_BATCH_SIZE);
      if (counts.inboxes === 0) break;
      slowest = Math.max(slowest, performance.now() - started);
      deleted += counts.messages;
      calls += 1;
    }
  });
  // Each call deletes SWEEP_BATCH_SIZE inboxes in steps of at most SWEEP_MESSAGES_PER_TRANSACTION messages.
  const stepsPerCall = Math.ceil((SWEEP_BATCH_SIZE * MESSAGES_PER_EXPIRED_INBOX) / SWEEP_MESSAGES_PER_TRANSACTION);
  const perMessage = (us: number) => (us / Math.max(deleted, 1)).toFixed(1);
  console.log(
    `${backend}${withTrigger ? ' with a delete trigger' : ''}: swept ${deleted} messages in ${calls} calls; ` +
      `CPU per message ${perMessage(cpu.local)} µs here${backend === 'postgres' ? ` + ${perMessage(cpu.server)} µs server` : ''}; ` +
      `slowest call ${slowest.toFixed(0)} ms (~${(slowest / stepsPerCall).toFixed(1)} ms per transaction step of ≤ ${SWEEP_MESSAGES_PER_TRANSACTION} messages)`,
  );
}

const bench = await openBench();
try {
  if (mode === 'sweep') await sweepCost(bench);
  else await deliveryCost(bench);
} finally {
  await bench.close();
}
