/**
 * `npm run bench [-- --quick] [--only smtp,http,…]`: the benchmark of docs/benchmarks.md.
 * Starts tempinbox as users do and the two floor servers, drives them with smtp-source and
 * autocannon, and prints one table with every figure as a ratio to its floor.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { openSqliteBenchDb } from './bench-db.js';
import { parseOptions } from './bench-options.js';
import { startHttpFloor, startSmtpFloor, type FloorServer } from './floor-servers.js';
import { formatTable, type ResultRow } from './result-table.js';
import { ensureBuilt, startService, type ServiceProcess } from './service-process.js';
import { memoryMegabytes } from './process-stats.js';
import { scaleFigures } from './scale-figures.js';
import { dropPostgresTargets, judgeScale } from './judge-rows.js';
import { serviceFigures, type FigureContext } from './service-figures.js';
import { senderAuthFigures } from './sender-auth-figures.js';
import { sweeperFigure } from './sweeper-figure.js';
import { postgresFigures } from './postgres-figures.js';
import { liveFigures } from './live-figures.js';
import { peerFigures } from './peer-figures.js';
import { storageFigure } from './storage-figure.js';
import { findSmtpSource } from './smtp-source.js';
import { secondsSince } from './stats.js';

const options = parseOptions(process.argv.slice(2));
const started = process.hrtime.bigint();
const rows: ResultRow[] = [];
/** Everything started, stopped in reverse order whatever happens. */
const cleanups: Array<() => Promise<void> | void> = [];

async function cleanup(): Promise<void> {
  for (const step of cleanups.splice(0).reverse()) {
    try {
      await step();
    } catch (error) {
      console.error(`bench: cleanup failed: ${String(error)}`);
    }
  }
}

process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));
process.once('SIGTERM', () => void cleanup().then(() => process.exit(143)));

/** A fresh data directory with the service on it (SQLite), registered for cleanup. */
async function freshService(env: Record<string, string> = {}): Promise<{ service: ServiceProcess; dir: string; dbPath: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'tempinbox-bench-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const dbPath = join(dir, 'tempinbox.db');
  const service = await startService(`sqlite:${dbPath}`, env);
  cleanups.push(() => service.server.stop());
  return { service, dir, dbPath };
}

async function main(): Promise<void> {
  ensureBuilt();
  const smtpSource = findSmtpSource();
  const mode = options.quick ? `quick (1 run of ${options.seconds} s per figure, smaller data: a smoke run, not the published method)` : `full (${options.runs} runs of ${options.seconds} s per figure, median)`;
  console.error(`bench: ${mode}; ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), ${(totalmem() / 2 ** 30).toFixed(1)} GiB`);

  const smtpFloor: FloorServer = await startSmtpFloor();
  cleanups.push(() => smtpFloor.server.stop());
  const httpFloor: FloorServer = await startHttpFloor();
  cleanups.push(() => httpFloor.server.stop());

  const { service, dbPath } = await freshService(options.serviceEnv);
  const db = openSqliteBenchDb(dbPath);
  cleanups.push(() => db.close());

  const context: FigureContext = { options, smtpSource, smtpFloor, httpFloor };
  const emptyRows = await serviceFigures(context, service, db);
  rows.push(...emptyRows);
  if (emptyRows.length > 0) {
    const memory = memoryMegabytes(service.pid);
    rows.push({ figure: '1–4 memory', label: 'server RSS after figures 1–4, empty database', value: memory.rss, unit: 'MB', detail: `peak ${memory.peak.toFixed(0)} MB` });
  }
  await service.server.stop();

  if (options.phases.has('auth')) rows.push(...(await senderAuthFigures(context)));
  if (options.phases.has('peer')) rows.push(...(await peerFigures(context)));
  if (options.phases.has('storage')) rows.push(...(await storageFigure(options)));
  if (options.phases.has('scale')) rows.push(...(await scaleFigures(context)));
  if (options.phases.has('sweeper')) rows.push(...(await sweeperFigure(options)));
  if (options.phases.has('pg')) rows.push(...(await postgresFigures(context, emptyRows)));
  if (options.phases.has('live')) rows.push(...(await liveFigures(options)));

  judgeScale(rows);
  dropPostgresTargets(rows);
  console.log(formatTable(rows));
  console.log(`\n${mode}; ${secondsSince(started).toFixed(0)} s in all`);
  if (options.out !== undefined) writeFileSync(options.out, JSON.stringify({ options: { ...options, phases: [...options.phases] }, rows }, null, 2));
}

try {
  await main();
} finally {
  await cleanup();
}
