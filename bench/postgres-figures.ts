import { openPostgresBenchDb, createScratchDatabase } from './postgres-bench-db.js';
import type { ResultRow } from './result-table.js';
import { POSTGRES_PREFIX } from './judge-rows.js';
import { serviceFigures, type FigureContext } from './service-figures.js';
import { startService } from './service-process.js';


/**
 * Figure 7: figures 1–4 with DATABASE_URL=postgres://… on a scratch database of the server
 * given by --postgres (default: postgres@127.0.0.1:5432), dropped afterwards. Each row also
 * says how it compares with SQLite's. Skipped, with a row saying why, when no server answers.
 */
export async function postgresFigures(context: FigureContext, sqliteRows: readonly ResultRow[]): Promise<ResultRow[]> {
  let scratch;
  try {
    scratch = await createScratchDatabase(context.options.postgresUrl);
  } catch (error) {
    console.error(`bench: 7 PostgreSQL skipped: ${String(error)}`);
    return [{ figure: '7 PostgreSQL', label: `skipped: no server at ${context.options.postgresUrl}`, value: Number.NaN, unit: '' }];
  }
  try {
    const service = await startService(scratch.url, context.options.serviceEnv);
    const db = await openPostgresBenchDb(scratch.url);
    try {
      const rows = await serviceFigures(context, service, db, POSTGRES_PREFIX);
      for (const row of rows) {
        const sqlite = sqliteRows.find((candidate) => `${POSTGRES_PREFIX}${candidate.figure}` === row.figure && candidate.label === row.label);
        if (sqlite !== undefined) row.detail = `${row.detail ?? ''}; SQLite ${sqlite.value.toFixed(sqlite.value < 100 ? 1 : 0)} ${row.unit}`;
      }
      return rows;
    } finally {
      await db.close();
      await service.server.stop();
    }
  } finally {
    await scratch.drop();
  }
}
