import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { cpuSeconds } from './process-stats.js';
import { DOMAIN, RECIPIENT_LOCAL, type BenchDb } from './bench-db.js';

/** A database of its own on the PostgreSQL server, dropped by `drop()`. */
export interface ScratchDatabase {
  url: string;
  drop: () => Promise<void>;
}

/** Creates `tempinbox_bench_<random>` on the server of `serverUrl` (a maintenance database such as postgres). */
export async function createScratchDatabase(serverUrl: string): Promise<ScratchDatabase> {
  const name = `tempinbox_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      try {
        // FORCE: connections the stopped service left behind must not keep it alive.
        await client.query(`drop database if exists ${name} with (force)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** BenchDb on the service's PostgreSQL database (the recipients are inserted directly, as on SQLite). */
export async function openPostgresBenchDb(url: string): Promise<BenchDb> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let seeded = 0;
  return {
    async ensureRecipients(wanted: number): Promise<void> {
      if (wanted <= seeded) return;
      const now = Date.now();
      await client.query(
        `insert into inboxes (id, username, domain, created_at, expires_at, session_id, license_id)
         select 'b' || lpad(g::text, 21, '0'), g || $1, $2, $3, $4, null, null from generate_series($5::int, $6::int) g
         on conflict do nothing`,
        [RECIPIENT_LOCAL, DOMAIN, now, now + 86_400_000, seeded + 1, wanted],
      );
      seeded = wanted;
    },
    async countMessages(): Promise<number> {
      const result = await client.query<{ n: string }>('select count(*) as n from messages');
      return Number(result.rows[0]?.n ?? 0);
    },
    close: () => client.end(),
  };
}

/**
 * CPU seconds (user + system) each server backend connected to the database of `url` has used
 * so far, by pid, from /proc (the server must run on this machine). The backend asking is left out.
 */
export async function backendCpuSeconds(url: string): Promise<Map<number, number>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
    const cpu = new Map<number, number>();
    for (const { pid } of rows) {
      try {
        cpu.set(pid, cpuSeconds(pid));
      } catch {
        // The backend ended in between.
      }
    }
    return cpu;
  } finally {
    await client.end();
  }
}

/**
 * Transactions committed or rolled back so far in the database of `url` (pg_stat_database): a
 * statement outside a transaction is one, so per poll it counts the round trips. Backends
 * report their counts when idle after up to 10 s (PGSTAT_IDLE_INTERVAL): read it that long
 * after the load.
 */
export async function transactionCount(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>('select xact_commit + xact_rollback as n from pg_stat_database where datname = current_database()');
    return Number(rows[0]?.n ?? 0);
  } finally {
    await client.end();
  }
}
