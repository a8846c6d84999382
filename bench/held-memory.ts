/**
 * `npx tsx bench/held-memory.ts [--mode sse|wait] [--clients N] [--hold-ms M] [--snapshot]
 * [--node-arg --flag]… [--no-service-flags]`: where a node's memory goes with N held clients
 * (docs/decisions/0032-held-client-memory-by-kind.md). Starts the service as the benchmark
 * does, sends one message (so the parse worker runs), opens N event streams or long-polls as
 * figure 8 does, holds them `--hold-ms` (25 s, HOLD_MS), and prints at each stage the RSS by
 * mapping (/proc/<pid>/smaps: files, malloc's main arena, other anonymous memory) and, read
 * inside the service on SIGUSR2 by a preload module, V8's spaces and each worker's heap; then
 * the bytes per client of each (the remainder is negative when V8 fills heap pages it had
 * already; read the old generation's figure then). `--snapshot` also writes a heap snapshot at each stage (into
 * the temporary folder printed; slow, and it grows the RSS it measures). `--no-service-flags`
 * starts the service without SERVICE_NODE_FLAGS (e.g. with other `--node-arg`s instead).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInbox, type BenchInbox } from './api-client.js';
import { assertFileLimit, LiveClients } from './live-clients.js';
import { CLIENTS_PER_INBOX, HOLD_MS } from './live-measure.js';
import { sendPaced } from './live-sender.js';
import { waitUntilIdle } from './process-stats.js';
import { ensureBuilt, startService } from './service-process.js';
import { SERVICE_NODE_FLAGS } from '../src/runtime-flags.js';

/** Clients opened before a pause, so that the server's listen queue never overflows. */
const OPEN_BATCH = 500;
/** The pause after each batch. */
const OPEN_PAUSE_MS = 100;
/** Longest wait for the service to go idle, and for its stats file. */
const SETTLE_LIMIT_MS = 120_000;

/** The preload: on SIGUSR2 it writes V8's and the workers' heap statistics to STATS_FILE. */
const PRELOAD = `
import v8 from 'node:v8';
import { writeFileSync } from 'node:fs';
const workers = new Set();
process.on('worker', (worker) => { workers.add(worker); worker.once('exit', () => workers.delete(worker)); });
process.on('SIGUSR2', async () => {
  const spaces = Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, { used: s.space_used_size, committed: s.physical_space_size }]));
  const threads = [];
  for (const worker of workers) threads.push((await worker.getHeapStatistics()).total_physical_size);
  const snapshot = process.env.HELD_MEMORY_SNAPSHOT ? v8.writeHeapSnapshot(process.env.HELD_MEMORY_SNAPSHOT + '-' + Date.now() + '.heapsnapshot') : null;
  writeFileSync(process.env.HELD_MEMORY_STATS, JSON.stringify({ spaces, workers: threads, snapshot }));
});
`;

const argv = process.argv.slice(2);
function arg(name: string, fallback: string): string {
  const at = argv.indexOf(`--${name}`);
  return at === -1 ? fallback : (argv[at + 1] ?? fallback);
}
const mode = arg('mode', 'sse') === 'wait' ? 'wait' : 'sse';
const clients = Number(arg('clients', '10000'));
const holdMs = Number(arg('hold-ms', String(HOLD_MS)));
const nodeArgs = argv.flatMap((value, i) => (value === '--node-arg' ? [argv[i + 1] ?? ''] : []));

interface Stage {
  rss: number;
  files: number;
  mallocMain: number;
  otherAnon: number;
  old: number;
  young: number;
  workers: number;
}

const MB = 2 ** 20;

/** Resident bytes of /proc/<pid>/smaps by kind of mapping. */
function smaps(pid: number): Pick<Stage, 'rss' | 'files' | 'mallocMain' | 'otherAnon'> {
  const sums = { rss: 0, files: 0, mallocMain: 0, otherAnon: 0 };
  let kind: 'files' | 'mallocMain' | 'otherAnon' = 'otherAnon';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (header !== null) {
      const name = header[1] ?? '';
      kind = name === '[heap]' ? 'mallocMain' : name.startsWith('/') ? 'files' : 'otherAnon';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss === null) continue;
    sums[kind] += Number(rss[1]) * 1024;
    sums.rss += Number(rss[1]) * 1024;
  }
  return sums;
}

async function settled(pid: number): Promise<void> {
  // A service still busy after the limit is measured as it is (its figure says so by itself).
  await waitUntilIdle(pid, SETTLE_LIMIT_MS);
}

async function stage(label: string, pid: number, statsFile: string): Promise<Stage> {
  const mapped = smaps(pid);
  rmSync(statsFile, { force: true });
  process.kill(pid, 'SIGUSR2');
  const deadline = performance.now() + SETTLE_LIMIT_MS;
  while (!existsSync(statsFile) && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
  await new Promise((resolve) => setTimeout(resolve, 200));
  const stats = JSON.parse(readFileSync(statsFile, 'utf8')) as { spaces: Record<string, { used: number; committed: number }>; workers: number[]; snapshot: string | null };
  const old = stats.spaces.old_space?.used ?? Number.NaN;
  const young = stats.spaces.new_space?.committed ?? Number.NaN;
  const workers = stats.workers.reduce((a, b) => a + b, 0);
  const result = { ...mapped, old, young, workers };
  const mb = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;
  console.log(
    `${label.padEnd(8)} RSS ${mb(result.rss)}: files ${mb(result.files)}, malloc main ${mb(result.mallocMain)}, other anon ${mb(result.otherAnon)}; ` +
      `main isolate old generation used ${mb(old)}, young generation committed ${mb(young)}; workers' heaps ${mb(workers)}${stats.snapshot === null ? '' : `; ${stats.snapshot}`}`,
  );
  return result;
}

assertFileLimit(clients);
ensureBuilt();
if (argv.includes('--no-service-flags')) (SERVICE_NODE_FLAGS as string[]).splice(0);
const dir = mkdtempSync(join(tmpdir(), 'tempinbox-held-memory-'));
const preload = join(dir, 'preload.mjs');
const statsFile = join(dir, 'stats.json');
writeFileSync(preload, PRELOAD);
const env: Record<string, string> = { HELD_MEMORY_STATS: statsFile, ...(argv.includes('--snapshot') ? { HELD_MEMORY_SNAPSHOT: join(dir, 'stage') } : {}) };
const service = await startService(`sqlite:${join(dir, 'db.sqlite')}`, env, undefined, [`--import=${preload}`, ...nodeArgs]);
const live = new LiveClients(service.baseUrl);
try {
  const { pid, baseUrl } = service;
  console.log(`${clients} ${mode === 'sse' ? 'event streams' : 'long-polls'}, node ${[...SERVICE_NODE_FLAGS, ...nodeArgs].join(' ')}; folder ${dir}`);
  const count = Math.ceil(clients / CLIENTS_PER_INBOX);
  const inboxes: BenchInbox[] = [];
  for (let i = 0; i < count; i += 1) inboxes.push(await createInbox(baseUrl));
  await sendPaced(service.smtpPort, [await createInbox(baseUrl)], 10, 0.1);
  await settled(pid);
  const idle = await stage('idle', pid, statsFile);
  const opening: Promise<void>[] = [];
  for (let i = 0; i < clients; i += 1) {
    const inbox = inboxes[i % count] as BenchInbox;
    if (mode === 'sse') opening.push(live.openStream(inbox));
    else live.startWaiter(inbox);
    if (i % OPEN_BATCH === OPEN_BATCH - 1) {
      await Promise.allSettled(opening);
      await new Promise((resolve) => setTimeout(resolve, OPEN_PAUSE_MS));
    }
  }
  await Promise.allSettled(opening);
  await settled(pid);
  await stage('open', pid, statsFile);
  await new Promise((resolve) => setTimeout(resolve, holdMs));
  const held = await stage('held', pid, statsFile);
  const kib = (key: keyof Stage) => ((held[key] - idle[key]) / clients / 1024).toFixed(1);
  console.log(
    `per client (held − idle): RSS ${kib('rss')} KiB = old generation ${kib('old')} + malloc main ${kib('mallocMain')} + young generation ${kib('young')} + other ${((held.rss - idle.rss - (held.old - idle.old) - (held.mallocMain - idle.mallocMain) - (held.young - idle.young)) / clients / 1024).toFixed(1)} KiB; ` +
      `${live.failures} client requests failed (${[...live.failureReasons].map(([reason, n]) => `${reason} ×${n}`).join(', ') || 'none'})`,
  );
} finally {
  live.close();
  await service.server.stop();
  if (!argv.includes('--snapshot')) rmSync(dir, { recursive: true, force: true });
}
