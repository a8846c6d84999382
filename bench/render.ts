/**
 * `npx tsx bench/render.ts results.json [--into docs/benchmarks.md]`: prints the tables of a
 * saved run (`npm run bench -- --out results.json`) again, with figure 5 judged by the current
 * rules; with --into, writes them between the results markers of that file.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { formatTable, formatTargets, type ResultRow } from './result-table.js';
import { dropPostgresTargets, judgeScale, SCALE_PREFIX } from './judge-rows.js';

const [path, flag, target] = process.argv.slice(2);
if (path === undefined) throw new Error('usage: tsx bench/render.ts results.json [--into file.md]');
const saved = JSON.parse(readFileSync(path, 'utf8')) as { rows: ResultRow[] };
for (const row of saved.rows) {
  if (!row.figure.startsWith(SCALE_PREFIX)) continue;
  // Drop an earlier judgement (older runs wrote it into the detail) before judging again.
  row.detail = row.detail?.replace(/; (empty database|[\d.]+×) .*$/, '');
  delete row.target;
  delete row.met;
}
judgeScale(saved.rows);
dropPostgresTargets(saved.rows);
const text = `### The targets\n\n${formatTargets(saved.rows)}\n\n### Every figure\n\n${formatTable(saved.rows)}`;
if (flag === '--into' && target !== undefined) {
  const doc = readFileSync(target, 'utf8');
  const start = '<!-- results:start -->';
  const end = '<!-- results:end -->';
  const from = doc.indexOf(start);
  const to = doc.indexOf(end);
  if (from < 0 || to < from) throw new Error(`${target} has no ${start} … ${end} markers`);
  writeFileSync(target, `${doc.slice(0, from + start.length)}\n${text}\n${doc.slice(to)}`);
} else {
  console.log(text);
}
