import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteBenchDb } from './bench-db.js';
import { memoryMegabytes } from './process-stats.js';
import type { ResultRow } from './result-table.js';
import { prepareScaleDatabase } from './scale-data.js';
import { SCALE_PREFIX } from './judge-rows.js';
import { serviceFigures, type FigureContext } from './service-figures.js';
import { startService } from './service-process.js';

/** Target of figure 5: resident memory of the server. */
const RSS_TARGET_MB = 300;

/**
 * Figure 5: figures 1–4 again on a database already holding `scaleInboxes` inboxes and
 * `scaleMessages` messages (judgeScale compares them with the empty database's), and the
 * server's RSS.
 */
export async function scaleFigures(context: FigureContext): Promise<ResultRow[]> {
  const { options } = context;
  const dir = mkdtempSync(join(tmpdir(), 'tempinbox-bench-scale-'));
  const path = join(dir, 'tempinbox.db');
  try {
    prepareScaleDatabase(path, { inboxes: options.scaleInboxes, messages: options.scaleMessages }, true);
    const service = await startService(`sqlite:${path}`, options.serviceEnv);
    const db = openSqliteBenchDb(path);
    try {
      const idle = memoryMegabytes(service.pid);
      const rows = await serviceFigures(context, service, db, SCALE_PREFIX);
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
