import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteBenchDb } from './bench-db.js';
import { memoryMegabytes } from './process-stats.js';
import type { ResultRow } from './result-table.js';
import { prepareScaleDatabase } from './scale-data.js';
import { serviceFigures, type FigureContext } from './service-figures.js';
import { startService } from './service-process.js';

/** Target of figure 5: every figure within this factor of the empty database's. */
const SCALE_FACTOR = 1.5;
/** Target of figure 5: resident memory of the server. */
const RSS_TARGET_MB = 300;
/** Prefix of the scale rows in the table. */
const PREFIX = '5 scale: ';

/**
 * Figure 5: figures 1–4 again on a database already holding `scaleInboxes` inboxes and
 * `scaleMessages` messages, each compared with the same figure on the empty database
 * (`emptyRows`), and the server's RSS after them.
 */
export async function scaleFigures(context: FigureContext, emptyRows: readonly ResultRow[]): Promise<ResultRow[]> {
  const { options } = context;
  const dir = mkdtempSync(join(tmpdir(), 'tempinbox-bench-scale-'));
  const path = join(dir, 'tempinbox.db');
  try {
    prepareScaleDatabase(path, { inboxes: options.scaleInboxes, messages: options.scaleMessages }, true);
    const service = await startService(`sqlite:${path}`, options.serviceEnv);
    const db = openSqliteBenchDb(path);
    try {
      const idle = memoryMegabytes(service.pid);
      const rows = await serviceFigures(context, service, db, PREFIX);
      for (const row of rows) compareWithEmpty(row, emptyRows);
      const memory = memoryMegabytes(service.pid);
      rows.push({
        figure: '5 scale',
        label: `server RSS (${options.scaleInboxes.toLocaleString('en-US')} inboxes, ${options.scaleMessages.toLocaleString('en-US')} messages)`,
        value: memory.rss,
        unit: 'MB',
        detail: `after start ${idle.rss.toFixed(0)} MB; after figures 1–4 ${memory.rss.toFixed(0)} MB, peak ${memory.peak.toFixed(0)} MB`,
        target: `< ${RSS_TARGET_MB} MB`,
        met: memory.peak < RSS_TARGET_MB,
      });
      return rows;
    } finally {
      await db.close();
      await service.server.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Replaces a scale row's target with figure 5's: throughput may drop, latency may grow, by
 * at most SCALE_FACTOR against the same figure on the empty database (measured in this run).
 */
function compareWithEmpty(row: ResultRow, emptyRows: readonly ResultRow[]): void {
  const empty = emptyRows.find((candidate) => `${PREFIX}${candidate.figure}` === row.figure && candidate.label === row.label);
  if (empty === undefined) return;
  const lowerIsBetter = row.unit === 'ms';
  const slowdown = lowerIsBetter ? row.value / empty.value : empty.value / row.value;
  const failed = row.detail?.includes('failed') === true || row.detail?.includes('≠') === true;
  row.detail = `${row.detail ?? ''}; empty database: ${empty.value.toFixed(empty.value < 100 ? 1 : 0)} ${row.unit} (scale/empty ${(row.value / empty.value).toFixed(2)})`;
  row.target = `within ${SCALE_FACTOR}× of empty`;
  row.met = slowdown <= SCALE_FACTOR && !failed;
}
