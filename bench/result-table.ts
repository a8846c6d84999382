/** One line of the benchmark's table. */
export interface ResultRow {
  /** Which figure of docs/benchmarks.md (e.g. "1 SMTP ingest"). */
  figure: string;
  /** The case within the figure (sizes, connections, database). */
  label: string;
  /** The measured figure, and its unit. */
  value: number;
  unit: string;
  /** The same figure on the floor server, when the figure has one. */
  floor?: number;
  /** More of what was measured (CPU per message, latency percentiles, verification). */
  detail?: string;
  /** The published target, in words, and whether this run met it. */
  target?: string;
  met?: boolean;
}

/** value / floor, or NaN when there is no floor. */
export function ratioOf(row: ResultRow): number {
  return row.floor === undefined || row.floor === 0 ? Number.NaN : row.value / row.floor;
}

function number(value: number): string {
  if (!Number.isFinite(value)) return '—';
  if (Math.abs(value) >= 100) return Math.round(value).toLocaleString('en-US');
  if (Math.abs(value) >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

/** The table as Markdown (what the terminal shows and docs/benchmarks.md quotes). */
export function formatTable(rows: readonly ResultRow[]): string {
  const lines = [
    '| figure | case | tempinbox | floor | ratio | detail | target | met |',
    '|---|---|--:|--:|--:|---|---|:-:|',
  ];
  for (const row of rows) {
    const ratio = ratioOf(row);
    lines.push(
      [
        '',
        row.figure,
        row.label,
        `${number(row.value)} ${row.unit}`,
        row.floor === undefined ? '—' : `${number(row.floor)} ${row.unit}`,
        Number.isFinite(ratio) ? `${(ratio * 100).toFixed(0)} %` : '—',
        row.detail ?? '',
        row.target ?? '',
        row.met === undefined ? '' : row.met ? 'yes' : '**no**',
        '',
      ].join(' | ').trim(),
    );
  }
  return lines.join('\n');
}

/** Only the rows with a published target, shortly: what `met` says at a glance. */
export function formatTargets(rows: readonly ResultRow[]): string {
  const lines = ['| figure | case | measured | target | met |', '|---|---|--:|---|:-:|'];
  for (const row of rows) {
    if (row.target === undefined) continue;
    const ratio = ratioOf(row);
    const measured = `${number(row.value)} ${row.unit}${Number.isFinite(ratio) ? ` (${(ratio * 100).toFixed(0)} % of floor)` : ''}`;
    lines.push(`| ${row.figure} | ${row.label} | ${measured} | ${row.target} | ${row.met === true ? 'yes' : '**no**'} |`);
  }
  return lines.join('\n');
}
