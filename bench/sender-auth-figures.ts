import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { DOMAIN, RECIPIENT_LOCAL } from './bench-db.js';
import { signedBenchMessage } from './bench-sender.js';
import type { ResultRow } from './result-table.js';
import type { FigureContext } from './service-figures.js';
import { startFreshService, type BenchService } from './fresh-service.js';
import { measureIngest, type IngestCase, type IngestFigure } from './smtp-ingest.js';
import { median } from './stats.js';

/** Figure 1a's name in the table. */
const FIGURE = '1a sender checks';

/** The case of figure 1 the checks are measured on: the one the ingest targets are set on. */
const BASE_CASE: IngestCase = { label: '4 KB, many per conn, 10 conns', size: 4096, sessions: 10, keepConnection: true };

/**
 * The verdicts stored with the newest message, as the API shows them (read from the service's
 * SQLite file; the storage layout may change, so a failure to read says so instead of failing
 * the figure).
 */
export function newestVerdicts(dbPath: string): string {
  try {
    const db = new BetterSqlite3(dbPath, { readonly: true, timeout: 10_000 });
    try {
      const json = db.prepare('select auth_json from message_insights order by rowid desc limit 1').pluck().get() as string | null | undefined;
      if (json === undefined || json === null) return 'auth null';
      const auth = JSON.parse(json) as { spf: { result: string }; dkim: { result: string }[]; dmarc: { result: string } };
      return `spf=${auth.spf.result} dkim=${auth.dkim.map((d) => d.result).join(',') || '[]'} dmarc=${auth.dmarc.result}`;
    } finally {
      db.close();
    }
  } catch (error) {
    return `verdicts not read (${String(error).slice(0, 60)})`;
  }
}

/**
 * Both services on one case, a run of each in turn (off, then on), `runs` times: the machine's
 * other load drifts over a figure, and measured one after the other the two halves would meet
 * different loads. The cost is the median of the paired differences of CPU per message.
 */
async function alternating(
  binary: string,
  off: BenchService['target'],
  on: BenchService['target'],
  testCase: IngestCase,
  runs: number,
  seconds: number,
): Promise<{ offFigure: IngestFigure; onFigure: IngestFigure; cost: number; mainCost: number }> {
  const offFigures: IngestFigure[] = [];
  const onFigures: IngestFigure[] = [];
  for (let i = 0; i < runs; i += 1) {
    offFigures.push(await measureIngest(binary, off, testCase, 1, seconds));
    onFigures.push(await measureIngest(binary, on, testCase, 1, seconds));
  }
  const merged = (figures: IngestFigure[]): IngestFigure => {
    const failed = figures.find((figure) => figure.error !== undefined);
    return {
      rate: median(figures.map((figure) => figure.rate)),
      cpuMsPerMessage: median(figures.map((figure) => figure.cpuMsPerMessage)),
      mainCpuMsPerMessage: median(figures.map((figure) => figure.mainCpuMsPerMessage)),
      runs: figures.flatMap((figure) => figure.runs),
      verified: figures.every((figure) => figure.verified === true),
      ...(failed?.error === undefined ? {} : { error: failed.error }),
    };
  };
  const paired = (pick: (figure: IngestFigure) => number): number => median(onFigures.map((figure, i) => pick(figure) - pick(offFigures[i] as IngestFigure)));
  return {
    offFigure: merged(offFigures),
    onFigure: merged(onFigures),
    cost: paired((figure) => figure.cpuMsPerMessage),
    mainCost: paired((figure) => figure.mainCpuMsPerMessage),
  };
}

const us = (ms: number): string => `${Math.round(ms * 1000).toLocaleString('en-US')} µs`;

/**
 * Figure 1a: what the sender checks (MAIL_AUTH) cost per message. Two services side by side,
 * one with MAIL_AUTH=on (the default; its DNS_SERVERS is the loopback server with the bench
 * sender's SPF, DKIM and DMARC records, bench/bench-sender.ts) and one with MAIL_AUTH=off,
 * measured on figure 1's 4 KB case in alternating runs: with smtp-source's own unsigned
 * message (SPF pass through an include, DMARC pass, no DKIM), and with a DKIM-signed 4 KB
 * message (DKIM verified too). The cost is the difference of server CPU per message, all
 * threads and the main thread alone.
 */
export async function senderAuthFigures(context: FigureContext): Promise<ResultRow[]> {
  const { options, smtpSource, smtpFloor } = context;
  const dir = mkdtempSync(join(tmpdir(), 'tempinbox-bench-signed-'));
  const messageFile = join(dir, 'signed.eml');
  writeFileSync(messageFile, await signedBenchMessage(`${RECIPIENT_LOCAL}@${DOMAIN}`, BASE_CASE.size));
  const started: BenchService[] = [];
  try {
    const off = await startFreshService({ MAIL_AUTH: 'off' });
    started.push(off);
    const on = await startFreshService({ MAIL_AUTH: 'on' });
    started.push(on);
    const floor = await measureIngest(smtpSource, { port: smtpFloor.port, pid: smtpFloor.pid }, BASE_CASE, options.runs, options.seconds);
    const rows: ResultRow[] = [];
    const variants: Array<{ name: string; testCase: IngestCase }> = [
      { name: 'unsigned (smtp-source)', testCase: BASE_CASE },
      { name: 'DKIM-signed', testCase: { ...BASE_CASE, messageFile } },
    ];
    for (const { name, testCase } of variants) {
      const questionsBefore = on.service.dns.queryCount;
      const { offFigure, onFigure, cost, mainCost } = await alternating(smtpSource, off.target, on.target, testCase, options.runs, options.seconds);
      const questions = on.service.dns.queryCount - questionsBefore;
      const sent = onFigure.runs.reduce((sum, run) => sum + run.messages, 0);
      const row = (mode: string, figure: IngestFigure, extra: string): ResultRow => ({
        figure: FIGURE,
        label: `${BASE_CASE.label}, ${name}, MAIL_AUTH=${mode}`,
        value: figure.rate,
        unit: 'msg/s',
        floor: floor.rate,
        detail:
          figure.error !== undefined
            ? `failed: ${figure.error.slice(0, 200)}`
            : `CPU ${us(figure.cpuMsPerMessage)}/msg, main thread ${us(figure.mainCpuMsPerMessage)}; ${figure.verified === true ? 'stored = sent' : '**stored ≠ sent**'}${extra}`,
      });
      rows.push(row('off', offFigure, ''));
      rows.push(row('on', onFigure, `; ${newestVerdicts(on.dbPath)}; ${questions} DNS questions to the loopback server for ${sent} measured messages (and the calibration run)`));
      rows.push({
        figure: FIGURE,
        label: `cost of the checks per message, ${name}`,
        value: cost * 1000,
        unit: 'µs/msg',
        detail: `server CPU on − off, all threads, median of ${onFigure.runs.length} back-to-back pairs; main thread ${us(mainCost)}`,
      });
      console.error(`bench: ${FIGURE}: ${name}: off ${us(offFigure.cpuMsPerMessage)}/msg, on ${us(onFigure.cpuMsPerMessage)}/msg`);
    }
    return rows;
  } finally {
    for (const service of started.reverse()) await service.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
