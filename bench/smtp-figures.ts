import type { ResultRow } from './result-table.js';
import { INGEST_CASES, measureIngest, type IngestFigure, type SmtpTarget } from './smtp-ingest.js';

/** The published target of a case, as a share of the floor; undefined when none is published. */
function targetShare(label: string): number | undefined {
  if (label.startsWith('4 KB, many per conn, 10 conns')) return 0.4;
  if (label.includes('one per conn, 500 conns')) return 0.8;
  return undefined;
}

/** Figure 1 on both targets, case by case (floor first, then the service, back to back). */
export async function smtpFigures(
  binary: string,
  service: SmtpTarget,
  floor: SmtpTarget | undefined,
  runs: number,
  seconds: number,
  figure = '1 SMTP ingest',
  caseFilter?: string,
): Promise<ResultRow[]> {
  const rows: ResultRow[] = [];
  for (const testCase of INGEST_CASES.filter((c) => caseFilter === undefined || c.label.includes(caseFilter))) {
    const onFloor = floor === undefined ? undefined : await measureIngest(binary, floor, testCase, runs, seconds);
    const measured = await measureIngest(binary, service, testCase, runs, seconds);
    const share = targetShare(testCase.label);
    const row: ResultRow = {
      figure,
      label: testCase.label,
      value: measured.rate,
      unit: 'msg/s',
      floor: onFloor?.rate,
      detail: describe(measured, onFloor),
    };
    if (share !== undefined && onFloor !== undefined) {
      row.target = `≥ ${share * 100} % of floor`;
      row.met = measured.rate >= share * onFloor.rate;
    }
    rows.push(row);
    console.error(`bench: ${figure}: ${testCase.label}: ${measured.rate.toFixed(0)} msg/s (floor ${onFloor?.rate.toFixed(0) ?? '—'})`);
  }
  return rows;
}

function describe(measured: IngestFigure, floor: IngestFigure | undefined): string {
  if (measured.error !== undefined) return `failed: ${measured.error.slice(0, 200)}`;
  const cpu = `CPU ${measured.cpuMsPerMessage.toFixed(2)} ms/msg (floor ${floor?.cpuMsPerMessage.toFixed(2) ?? '—'})`;
  const verified = measured.verified === true ? 'stored = sent' : '**stored ≠ sent**';
  return `${cpu}; ${verified}`;
}
