/**
 * Where the service's memory goes under the SMTP loads of figure 1: starts the service (as
 * bench/run.ts does) with the given environment and node arguments, drives 4 KB messages
 * over reused connections, then 100 KB messages one per connection from 500 clients, and
 * prints its RSS after each stage with a breakdown from /proc/<pid>/smaps (malloc's main
 * arena, other anonymous mappings — V8's heaps and the threads' malloc arenas — and files).
 *
 *   npx tsx bench/memory-probe.ts [NAME=value ...] [--node-arg=--flag ...]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteBenchDb, RECIPIENT_LOCAL, DOMAIN } from './bench-db.js';
import { cpuSeconds, memoryMegabytes } from './process-stats.js';
import { ensureBuilt, migrate, startService } from './service-process.js';
import { findSmtpSource, runSmtpSource } from './smtp-source.js';

/** Messages of the 4 KB stage: a few seconds of load, enough for the heaps to reach their working size. */
const SMALL_MESSAGES = 20_000;
/** Messages of the 100 KB stage, one per connection from 500 clients (figure 1's largest case). */
const LARGE_MESSAGES = 3_000;

interface SmapsSummary {
  mallocMain: number;
  anonymous: number;
  files: number;
}

/** Resident MB of /proc/<pid>/smaps by kind of mapping. */
function smaps(pid: number): SmapsSummary {
  const summary: SmapsSummary = { mallocMain: 0, anonymous: 0, files: 0 };
  let kind: keyof SmapsSummary = 'anonymous';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ (\d+)\s*(.*)$/.exec(line);
    if (header !== null) {
      const name = header[2] ?? '';
      kind = name === '[heap]' ? 'mallocMain' : name.startsWith('/') ? 'files' : 'anonymous';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss !== null) summary[kind] += Number(rss[1]) / 1024;
  }
  return summary;
}

function report(stage: string, pid: number, cpuBefore: number, messages: number): void {
  const { rss, peak } = memoryMegabytes(pid);
  const parts = smaps(pid);
  const cpu = messages > 0 ? ` cpu ${(((cpuSeconds(pid) - cpuBefore) / messages) * 1e6).toFixed(0)} µs/msg` : '';
  console.log(
    `${stage.padEnd(22)} rss ${rss.toFixed(0)} MB (peak ${peak.toFixed(0)}): malloc main ${parts.mallocMain.toFixed(0)}, other anon ${parts.anonymous.toFixed(0)}, files ${parts.files.toFixed(0)}${cpu}`,
  );
}

async function main(): Promise<void> {
  const env: Record<string, string> = {};
  const nodeArgs: string[] = [];
  for (const arg of process.argv.slice(2)) {
    if (arg.startsWith('--hold=')) continue;
    if (arg.startsWith('--node-arg=')) nodeArgs.push(arg.slice('--node-arg='.length));
    else if (arg.includes('=')) env[arg.slice(0, arg.indexOf('='))] = arg.slice(arg.indexOf('=') + 1);
  }
  ensureBuilt();
  const smtpSource = findSmtpSource();
  const dir = mkdtempSync(join(tmpdir(), 'tempinbox-memory-'));
  const url = `sqlite:${join(dir, 'tempinbox.db')}`;
  migrate(url);
  const db = openSqliteBenchDb(join(dir, 'tempinbox.db'));
  await db.ensureRecipients(SMALL_MESSAGES);
  const service = await startService(url, env, undefined, nodeArgs);
  try {
    report('started', service.pid, 0, 0);
    const recipient = `${RECIPIENT_LOCAL}@${DOMAIN}`;
    let before = cpuSeconds(service.pid);
    await runSmtpSource(smtpSource, { port: service.smtpPort, sessions: 10, messages: SMALL_MESSAGES, size: 4096, keepConnection: true, recipient });
    report('4 KB x 20,000', service.pid, before, SMALL_MESSAGES);
    before = cpuSeconds(service.pid);
    await runSmtpSource(smtpSource, { port: service.smtpPort, sessions: 500, messages: LARGE_MESSAGES, size: 100_000, keepConnection: false, recipient });
    report('100 KB x 3,000 / 500', service.pid, before, LARGE_MESSAGES);
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    report('5 s idle', service.pid, 0, 0);
    // --hold=S: keep the service up S seconds more (e.g. to attach gdb and call malloc_trim).
    const hold = Number(process.argv.find((arg) => arg.startsWith('--hold='))?.slice('--hold='.length) ?? 0);
    if (hold > 0) {
      console.log(`holding ${hold} s; pid ${service.pid}`);
      await new Promise((resolve) => setTimeout(resolve, hold * 1000));
      report('after hold', service.pid, 0, 0);
    }
  } finally {
    await service.server.stop(10_000);
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
