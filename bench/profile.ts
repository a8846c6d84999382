/**
 * `npx tsx bench/profile.ts [smtp-4k|smtp-signed|smtp-100k|smtp-one|check|since|etag|create] [seconds] [NAME=value…]`: runs one
 * load against the service with every thread under V8's CPU profiler (`--cpu-prof` through
 * NODE_OPTIONS, so that the worker threads write theirs too), then prints where the main
 * thread's CPU went (self time by function and by package, inclusive time of the hot paths)
 * and, for the SMTP loads, one message's CPU by stage and thread (bench/ingest-stages.ts:
 * SMTP protocol, sender checks, thread hops, parse, code and link finding, storage, commit,
 * logging, GC), with the SQLite writer's fsync wait apart. The .cpuprofile files are kept
 * for a flame graph (open them in Chrome DevTools or speedscope). It also prints the server's
 * CPU per message or request (all threads, and the main thread alone) and the event loop's
 * delay during the load (bench/loop-probe.ts, preloaded into the service).
 * `smtp-signed` sends a DKIM-signed 4 KB message (bench/bench-sender.ts); NAME=value pairs
 * are added to the service's environment (e.g. MAIL_AUTH=off). The sender checks ask the
 * service's loopback DNS server (bench/service-process.ts).
 * `etag` is the check answered 304 (If-None-Match with the check's own ETag).
 * `--postgres[=URL]` (anywhere after the load) runs the service on a scratch PostgreSQL
 * database of that server (default postgres://postgres@127.0.0.1:5432/postgres), dropped after.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkInbox, createInbox } from './api-client.js';
import { DOMAIN, openSqliteBenchDb, RECIPIENT_LOCAL, type BenchDb } from './bench-db.js';
import { signedBenchMessage } from './bench-sender.js';
import { summariseProfile } from './cpu-profile-summary.js';
import { ingestStages } from './ingest-stages.js';
import { runHttpLoad } from './http-load.js';
import { backendCpuSeconds, createScratchDatabase, openPostgresBenchDb, transactionCount, type ScratchDatabase } from './postgres-bench-db.js';
import { cpuSeconds, threadCpuSeconds, type ThreadCpu } from './process-stats.js';
import { ensureBuilt, ROOT, startService } from './service-process.js';
import { buildMessage, sendOne } from './smtp-client.js';
import { findSmtpSource, runSmtpSource } from './smtp-source.js';

const postgresArg = process.argv.find((arg) => arg === '--postgres' || arg.startsWith('--postgres='));
const args = process.argv.filter((arg) => arg !== postgresArg);
const load = args[2] ?? 'smtp-4k';
const seconds = Number(args[3] ?? 8);
const extraEnv = Object.fromEntries(args.slice(4).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
ensureBuilt();
const dir = mkdtempSync(join(tmpdir(), 'tempinbox-profile-'));
const probeOut = join(dir, 'probe.jsonl');
const scratch: ScratchDatabase | undefined =
  postgresArg === undefined
    ? undefined
    : await createScratchDatabase(postgresArg.includes('=') ? postgresArg.slice(postgresArg.indexOf('=') + 1) : 'postgres://postgres@127.0.0.1:5432/postgres');
// --cpu-prof through NODE_OPTIONS rather than the command line: worker threads started with
// an execArgv of their own (the parse pool's) do not inherit the command line's flags, but
// every thread reads NODE_OPTIONS, so each writes its own profile.
const profileOptions = `--cpu-prof --cpu-prof-dir=${dir}`;
const service = await startService(
  scratch?.url ?? `sqlite:${join(dir, 'tempinbox.db')}`,
  { ...extraEnv, BENCH_PROBE_OUT: probeOut, NODE_OPTIONS: profileOptions },
  undefined,
  ['--import', join(ROOT, 'bench', 'loop-probe.ts')],
);
const db: BenchDb = scratch === undefined ? openSqliteBenchDb(join(dir, 'tempinbox.db')) : await openPostgresBenchDb(scratch.url);
/** Work items the load completed (messages or requests), for the per-item CPU figures. */
let items = 0;
let serverCpu = 0;
/** PostgreSQL: CPU seconds of the server's backends of the scratch database, by pid, before and after the load. */
let backendBefore: Map<number, number> | undefined;
let backendAfter: Map<number, number> | undefined;
/** PostgreSQL, HTTP loads: transactions of the scratch database per request (round trips of a poll). */
let transactionsPerItem: number | undefined;
let transactionsBefore: number | undefined;
/** The load's start and end on the monotonic clock (µs), which the profiles' timestamps use too. */
const window = { from: 0, to: 0 };
/** Per-thread CPU seconds of the service before and after the load. */
let threadsBefore = new Map<number, ThreadCpu>();
let threadsAfter = new Map<number, ThreadCpu>();
/** Marks the start or the end of the measured load in the probe's output, and in `window`. */
const mark = () => {
  process.kill(service.pid, 'SIGUSR2');
  const now = Number(process.hrtime.bigint() / 1000n);
  if (window.from === 0) {
    window.from = now;
    threadsBefore = threadCpuSeconds(service.pid);
  } else {
    window.to = now;
    threadsAfter = threadCpuSeconds(service.pid);
  }
};
try {
  if (load.startsWith('smtp')) {
    const size = load === 'smtp-100k' ? 102_400 : 4096;
    const one = load === 'smtp-one';
    const messages = Math.round(seconds * (size > 4096 ? 60 : 400));
    await db.ensureRecipients(messages);
    const messageFile = load === 'smtp-signed' ? join(dir, 'signed.eml') : undefined;
    if (messageFile !== undefined) writeFileSync(messageFile, await signedBenchMessage(`${RECIPIENT_LOCAL}@${DOMAIN}`, size));
    // One message first, outside the measurement: the parse worker starts on the first one.
    const first = `1${RECIPIENT_LOCAL}@${DOMAIN}`;
    await sendOne(service.smtpPort, 'sender@bench.example', first, buildMessage('sender@bench.example', first, 'warm-up', size));
    const questionsBefore = service.dns.queryCount;
    const cpuBefore = cpuSeconds(service.pid);
    backendBefore = scratch === undefined ? undefined : await backendCpuSeconds(scratch.url);
    mark();
    const result = await runSmtpSource(findSmtpSource(), {
      port: service.smtpPort,
      sessions: one ? 500 : 10,
      messages,
      size,
      keepConnection: !one,
      recipient: `${RECIPIENT_LOCAL}@${DOMAIN}`,
      messageFile,
    });
    mark();
    if (!result.ok) throw new Error(`smtp-source failed: ${result.stderr}`);
    serverCpu = cpuSeconds(service.pid) - cpuBefore;
    backendAfter = scratch === undefined ? undefined : await backendCpuSeconds(scratch.url);
    items = messages;
    const questions = service.dns.queryCount - questionsBefore;
    console.log(`${messages} messages in ${result.seconds.toFixed(1)} s (${(messages / result.seconds).toFixed(0)} msg/s); ${questions} DNS questions to the loopback server`);
  } else {
    const inbox = await createInbox(service.baseUrl);
    for (let i = 0; i < 20; i += 1) await sendOne(service.smtpPort, 'a@bench.example', inbox.email, buildMessage('a@bench.example', inbox.email, `m${i}`, 1024));
    const newest = (await checkInbox(service.baseUrl, inbox)).ids[0] ?? '';
    const url =
      load === 'create'
        ? `${service.baseUrl}/api/create`
        : `${service.baseUrl}/api/check/${inbox.username}${load === 'since' ? `?since=${newest}` : ''}`;
    const cookie = { cookie: inbox.cookie };
    const etag = load === 'etag' ? ((await fetch(url, { headers: cookie })).headers.get('etag') ?? '') : undefined;
    const headers = load === 'create' ? {} : etag === undefined ? cookie : { ...cookie, 'if-none-match': etag };
    const cpuBefore = cpuSeconds(service.pid);
    backendBefore = scratch === undefined ? undefined : await backendCpuSeconds(scratch.url);
    transactionsBefore = scratch === undefined ? undefined : await transactionCount(scratch.url);
    mark();
    const result = await runHttpLoad({ url, connections: 10, seconds, headers, expectStatus: etag === undefined ? undefined : 304 });
    mark();
    serverCpu = cpuSeconds(service.pid) - cpuBefore;
    backendAfter = scratch === undefined ? undefined : await backendCpuSeconds(scratch.url);
    items = Math.round(result.rps * seconds);
    if (scratch !== undefined) {
      // Counted from the load's start to 11 s after its end, when every backend has reported.
      const before = transactionsBefore ?? 0;
      await new Promise((done) => setTimeout(done, 11_000));
      transactionsPerItem = ((await transactionCount(scratch.url)) - before) / Math.max(items, 1);
    }
    console.log(`${result.rps.toFixed(0)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, failures ${result.failures}`);
  }
} finally {
  await db.close();
  await service.server.stop();
  await scratch?.drop();
}
// The signals are handled asynchronously: wait for the probe's two lines.
for (let i = 0; i < 50 && !(existsSync(probeOut) && readFileSync(probeOut, 'utf8').split('\n').length > 2); i += 1) await new Promise((done) => setTimeout(done, 100));
const probe = readFileSync(probeOut, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as ProbeLine);
const during = probe[1];
if (during !== undefined) {
  const us = (ms: number) => `${((ms * 1000) / Math.max(items, 1)).toFixed(0)} µs`;
  const d = during.loopDelayMs;
  console.log(
    `server CPU per item (all threads) ${((serverCpu * 1e6) / Math.max(items, 1)).toFixed(0)} µs; main thread ${us(during.mainThreadCpuMs)} ` +
      `(${((during.mainThreadCpuMs / during.wallMs) * 100).toFixed(0)} % of the wall time busy); ` +
      `event-loop delay p50/p99/max ${d.p50.toFixed(1)}/${d.p99.toFixed(1)}/${d.max.toFixed(1)} ms; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`,
  );
  if (backendAfter !== undefined) {
    // A backend that connected during the load counts from zero (its start-up included).
    let spent = 0;
    for (const [pid, after] of backendAfter) spent += after - (backendBefore?.get(pid) ?? 0);
    console.log(`PostgreSQL backends' CPU per item ${((spent * 1e6) / Math.max(items, 1)).toFixed(0)} µs (${backendAfter.size} backends of the scratch database)`);
    if (transactionsPerItem !== undefined) console.log(`PostgreSQL transactions (round trips) per request ${transactionsPerItem.toFixed(2)}`);
  }
}
// The main thread's profile (thread id 0 in the file name: CPU.<date>.<time>.<pid>.<tid>.<n>.cpuprofile); workers write their own.
const file = readdirSync(dir).find((name) => /\.cpuprofile$/.test(name) && name.split('.')[4] === '0');
if (file === undefined) throw new Error('no profile written');
/** One line of bench/loop-probe.ts. */
interface ProbeLine {
  wallMs: number;
  mainThreadCpuMs: number;
  loopDelayMs: { p50: number; p99: number; max: number };
}
const summary = summariseProfile(join(dir, file), 25, ['parseMail', 'PostalMime', 'insertMessageCopies', 'sanitize', 'htmlToPlainText', 'smtp-server', 'kysely', 'pino', 'fastify', 'checkInboxHandler', 'findSession', 'executeQuery', 'writeUtf8String']);
const pct = (share: number) => `${(share * 100).toFixed(1).padStart(5)} %`;
console.log(`\nprofile: ${join(dir, file)}\n\nself time by place:`);
for (const row of summary.places) console.log(`${pct(row.share)}  ${row.name}`);
console.log('\nself time by function:');
for (const row of summary.functions) console.log(`${pct(row.share)}  ${row.name}`);
console.log('\ninclusive time:');
for (const row of summary.inclusive) console.log(`${pct(row.share)}  ${row.name}`);
if (load.startsWith('smtp') && window.to > window.from) {
  console.log(`\nby stage, every thread (${items} messages; bench/ingest-stages.ts):\n`);
  console.log(ingestStages(dir, window.from, window.to, items, threadsBefore, threadsAfter, service.pid));
}
