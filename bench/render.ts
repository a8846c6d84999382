/**
 * `npx tsx bench/render.ts results.json`: prints the table of a saved run (`npm run bench --
 * --out results.json`) again, with figure 5 judged by the current rules.
 */
import { readFileSync } from 'node:fs';
import { formatTable, type ResultRow } from './result-table.js';
import { judgeScale, SCALE_PREFIX } from './scale-judgement.js';

const path = process.argv[2];
if (path === undefined) throw new Error('usage: tsx bench/render.ts results.json');
const saved = JSON.parse(readFileSync(path, 'utf8')) as { rows: ResultRow[] };
for (const row of saved.rows) {
  if (!row.figure.startsWith(SCALE_PREFIX)) continue;
  // Drop an earlier judgement (older runs wrote it into the detail) before judging again.
  row.detail = row.detail?.replace(/; (empty database|[\d.]+×) .*$/, '');
  delete row.target;
  delete row.met;
}
judgeScale(saved.rows);
console.log(formatTable(saved.rows));
