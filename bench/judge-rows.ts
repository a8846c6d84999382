import { ratioOf, type ResultRow } from './result-table.js';

/** Target of figure 5: every figure within this factor of the empty database's. */
export const SCALE_FACTOR = 1.5;
/** Prefix of the scale rows in the table. */
export const SCALE_PREFIX = '5 scale: ';

/**
 * Sets figure 5's target on every scale row: throughput may drop, latency may grow, by at
 * most SCALE_FACTOR against the same figure on the empty database in the same run. Where
 * both have a floor, the ratios to their floors are compared (the machine's load changes
 * between the two measurements; each ratio was taken back to back with its floor).
 */
export function judgeScale(rows: ResultRow[]): void {
  for (const row of rows) {
    if (!row.figure.startsWith(SCALE_PREFIX)) continue;
    const empty = rows.find((candidate) => `${SCALE_PREFIX}${candidate.figure}` === row.figure && candidate.label === row.label);
    if (empty === undefined) continue;
    const failed = row.detail?.includes('failed') === true || row.detail?.includes('≠') === true;
    const byFloor = Number.isFinite(ratioOf(row)) && Number.isFinite(ratioOf(empty));
    const scale = byFloor ? ratioOf(row) : row.value;
    const base = byFloor ? ratioOf(empty) : empty.value;
    const slowdown = row.unit === 'ms' ? scale / base : base / scale;
    const shown = byFloor ? `${(base * 100).toFixed(0)} % of floor` : `${base.toFixed(1)} ${row.unit}`;
    row.detail = `${row.detail ?? ''}; empty database ${shown}, slowdown ${slowdown.toFixed(2)}×`;
    row.target = `within ${SCALE_FACTOR}× of empty`;
    row.met = slowdown <= SCALE_FACTOR && !failed;
  }
}

/** Prefix of the PostgreSQL rows in the table. */
export const POSTGRES_PREFIX = '7 PostgreSQL: ';

/**
 * The published targets are for SQLite on 2 cores; PostgreSQL's rows (figure 7) are reported
 * without them (its server shares the same two cores here).
 */
export function dropPostgresTargets(rows: ResultRow[]): void {
  for (const row of rows) {
    if (!row.figure.startsWith(POSTGRES_PREFIX)) continue;
    delete row.target;
    delete row.met;
  }
}
