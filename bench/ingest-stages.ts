import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { busyByKey, type CallFrame } from './cpu-profile-summary.js';
import type { ThreadCpu } from './process-stats.js';

/**
 * The stages of one message's ingest, in the order the table shows them. A sample belongs to
 * the stage of the frame nearest its leaf that names one (STAGE_RULES): a regular expression
 * run by the code finder is code and link finding, a socket write called by smtp-server is the
 * SMTP protocol. Node's internals and shared helpers name none, so they count for their caller.
 */
const STAGES = [
  'SMTP protocol (smtp-server, socket reads and writes)',
  'sender checks (SPF, DKIM, DMARC, ARC)',
  'thread hops (postMessage, piscina)',
  'parse (MIME, HTML, text)',
  'code and link finding',
  'storage read (the RCPT TO lookup)',
  'storage write (statements, group commit)',
  'commit (BEGIN/COMMIT: WAL write, fsync)',
  'delivery service',
  'logging and metrics',
  'garbage collection (in the thread)',
  'worker start-up (module loading)',
  'other (event loop, native, unnamed)',
] as const;
type Stage = (typeof STAGES)[number];

/** Our own code's folder (compiled or source) and the packages each stage's code lives in. */
const own = (path: string): string => `/(?:dist|src)/${path}`;
const pkg = (names: string): string => `node_modules/(?:${names})/`;
const STAGE_RULES: ReadonlyArray<[Stage, RegExp]> = [
  ['code and link finding', new RegExp(own('mail/extract-(?:codes|links)'))],
  ['parse (MIME, HTML, text)', new RegExp(`${own('mail/')}|${pkg('postal-mime|sanitize-html|html-to-text|htmlparser2|domhandler|domutils|dom-serializer|entities|selderee|parseley|@selderee/[^/]+|leac|postcss|deepmerge')}`)],
  ['sender checks (SPF, DKIM, DMARC, ARC)', new RegExp(`${own('mail-auth/')}|${pkg('mailauth|tldts|tldts-core|ipaddr\\.js|punycode\\.js|psl|@postalsys/[^/]+')}`)],
  ['logging and metrics', new RegExp(`${own('observability/')}|${pkg('pino|sonic-boom|pino-std-serializers|fast-redact|quick-format-unescaped|safe-stable-stringify|prom-client')}`)],
  ['storage read (the RCPT TO lookup)', new RegExp(own('storage/sql/(?:sqlite-reader|hot-queries|message-reads)'))],
  ['storage write (statements, group commit)', new RegExp(`${own('storage/')}|${pkg('kysely|better-sqlite3')}`)],
  ['thread hops (postMessage, piscina)', new RegExp(`${pkg('piscina')}|^node:internal/(?:worker|per_context/messageport)`)],
  ['SMTP protocol (smtp-server, socket reads and writes)', new RegExp(`${own('smtp/')}|${pkg('smtp-server')}`)],
  ['delivery service', new RegExp(own('(?:services|events)/'))],
  ['worker start-up (module loading)', /^node:internal\/(?:modules|bootstrap)\//],
];
/** better-sqlite3's transaction wrapper: with nothing of ours below it, it is running BEGIN or COMMIT. */
const TRANSACTION = /node_modules\/better-sqlite3\/lib\/methods\/transaction\.js/;

/** The stage of one sample, from its stack (leaf first). */
function stageOf(stack: readonly CallFrame[]): Stage {
  const leaf = stack[0]?.functionName;
  if (leaf === '(garbage collector)') return 'garbage collection (in the thread)';
  let belowHasCode = false;
  for (const { url } of stack) {
    if (url === '') continue;
    if (TRANSACTION.test(url) && !belowHasCode) return 'commit (BEGIN/COMMIT: WAL write, fsync)';
    belowHasCode = true;
    for (const [stage, rule] of STAGE_RULES) if (rule.test(url)) return stage;
  }
  return 'other (event loop, native, unnamed)';
}

/** One profiled thread: which it is, its busy time by stage, its CPU. */
interface ThreadStages {
  role: string;
  busy: Map<Stage, number>;
  /** Seconds on a CPU and in the run queue during the window (schedstat; stat's ticks without it). */
  onCpu: number;
  runQueue: number;
}

/** The name /proc gives the CPU profiler's own threads: their time is the measurement's, not the service's. */
const PROFILER_THREAD = 'v8:ProfEvntProc';

/** Profiles written by `--cpu-prof` in `dir`, by Node thread id (0: the main thread). */
function profilesIn(dir: string): Array<{ path: string; threadId: number }> {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.cpuprofile'))
    .map((name) => ({ path: join(dir, name), threadId: Number(name.split('.')[4]) }))
    .sort((a, b) => a.threadId - b.threadId);
}

/** What a thread runs, from the stages it was busy in. */
function roleOf(busy: Map<Stage, number>, threadId: number): string {
  if (threadId === 0) return 'main';
  if ((busy.get('commit (BEGIN/COMMIT: WAL write, fsync)') ?? 0) > 0) return 'SQLite writer';
  if ((busy.get('parse (MIME, HTML, text)') ?? 0) > 0) return 'parse worker';
  return 'worker';
}

/** Thread time spent between two readings; a thread born in between counts from zero. */
function spent(before: Map<number, ThreadCpu>, after: ThreadCpu): { onCpu: number; runQueue: number } {
  const start = before.get(after.tid);
  const onCpu = Number.isFinite(after.onCpu) ? after.onCpu - (start?.onCpu ?? 0) : after.seconds - (start?.seconds ?? 0);
  return { onCpu, runQueue: Number.isFinite(after.runQueue) ? after.runQueue - (start?.runQueue ?? 0) : 0 };
}

/**
 * The per-stage table of an ingest load profiled in `dir` (every thread's .cpuprofile), for
 * the samples between `from` and `to` (µs, monotonic) and `items` messages. Each thread's CPU
 * (schedstat, before and after) is shared among its stages in proportion to their busy time.
 * Busy time also holds time waiting for a CPU and time blocked in a system call; neither can
 * be told apart per stage (on a loaded machine a thread woken from its event loop waits for
 * a CPU still marked idle), so the SQLite writer's time inside BEGIN/COMMIT, which holds the
 * fsync, is shown as wall time, beside the thread's CPU and run-queue time.
 * Workers map to /proc's `WorkerThread`s in the order they were started.
 */
export function ingestStages(dir: string, from: number, to: number, items: number, before: Map<number, ThreadCpu>, after: Map<number, ThreadCpu>, pid: number): string {
  const workerTids = [...after.values()].filter((t) => t.name === 'WorkerThread').map((t) => t.tid).sort((a, b) => a - b);
  const threads: ThreadStages[] = [];
  let commitUs = 0;
  const profiles = profilesIn(dir);
  const workers = profiles.filter((p) => p.threadId !== 0);
  for (const { path, threadId } of profiles) {
    const busy = busyByKey(path, from, to, stageOf) as Map<Stage, number>;
    const tid = threadId === 0 ? pid : workers.length === workerTids.length ? workerTids[workers.findIndex((w) => w.threadId === threadId)] : undefined;
    const reading = tid === undefined ? undefined : after.get(tid);
    const { onCpu, runQueue } = reading === undefined ? { onCpu: Number.NaN, runQueue: 0 } : spent(before, reading);
    const role = roleOf(busy, threadId);
    if (role === 'SQLite writer') commitUs += busy.get('commit (BEGIN/COMMIT: WAL write, fsync)') ?? 0;
    threads.push({ role, busy, onCpu, runQueue });
  }
  const perItem = (seconds: number): number => (seconds * 1e6) / Math.max(items, 1);
  const cpuOf = (thread: ThreadStages, stage: Stage): number => {
    const total = [...thread.busy.values()].reduce((sum, us) => sum + us, 0);
    return total === 0 ? 0 : perItem(thread.onCpu) * ((thread.busy.get(stage) ?? 0) / total);
  };
  const cell = (value: number): string => (Number.isFinite(value) ? Math.round(value).toLocaleString('en-US') : '—').padStart(9);
  const shown = threads.filter((t) => t.busy.size > 0);
  const lines = [`${'stage (µs of CPU per message)'.padEnd(54)}${shown.map((t) => t.role.padStart(15)).join('')}${'all'.padStart(9)}`];
  for (const stage of STAGES) {
    const values = shown.map((t) => cpuOf(t, stage));
    const sum = values.reduce((a, b) => a + b, 0);
    if (sum < 0.5) continue;
    lines.push(`${stage.padEnd(54)}${values.map((v) => cell(v).padStart(15)).join('')}${cell(sum)}`);
  }
  const cpus = shown.map((t) => perItem(t.onCpu));
  lines.push(`${'thread CPU (schedstat)'.padEnd(54)}${cpus.map((v) => cell(v).padStart(15)).join('')}${cell(cpus.reduce((a, b) => a + b, 0))}`);
  lines.push(`${'  and waiting for a CPU (run queue)'.padEnd(54)}${shown.map((t) => cell(perItem(t.runQueue)).padStart(15)).join('')}`);
  const wall = (to - from) / 100;
  lines.push('', `the SQLite writer inside BEGIN/COMMIT: ${Math.round(commitUs / Math.max(items, 1)).toLocaleString('en-US')} µs of wall time per message, ${(commitUs / wall).toFixed(0)} % of the load's (on a CPU, waiting for one, and blocked in fsync)`);
  const other = new Map<string, number>();
  for (const thread of after.values()) {
    if (thread.tid === pid || thread.name === 'WorkerThread') continue;
    other.set(thread.name, (other.get(thread.name) ?? 0) + perItem(spent(before, thread).onCpu));
  }
  const us = (value: number): string => `${Math.round(value).toLocaleString('en-US')} µs`;
  const rest = [...other].filter(([, value]) => value >= 0.5).map(([name, value]) => `${name} ${us(value)}`);
  lines.push(`other threads, CPU per message: ${rest.join(', ') || 'none'} (V8Worker: V8's concurrent GC and compiler; libuv-worker: file system calls; v8:ProfEvntProc: the profiler itself)`);
  const profiler = other.get(PROFILER_THREAD) ?? 0;
  const all = cpus.reduce((a, b) => a + b, 0) + [...other.values()].reduce((a, b) => a + b, 0) - profiler;
  lines.push(`all threads but the profiler's: ${us(all)} of CPU per message`);
  return lines.join('\n');
}
