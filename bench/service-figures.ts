import type { BenchDb } from './bench-db.js';
import type { BenchOptions } from './bench-options.js';
import { deliveryLatency } from './delivery-latency.js';
import type { FloorServer } from './floor-servers.js';
import { httpFigures, pollableInbox } from './http-figures.js';
import type { ResultRow } from './result-table.js';
import type { ServiceProcess } from './service-process.js';
import { smtpFigures } from './smtp-figures.js';

/** The floors and tools every run of figures 1–4 needs. */
export interface FigureContext {
  options: BenchOptions;
  smtpSource: string;
  smtpFloor: FloorServer;
  httpFloor: FloorServer;
}

/**
 * Figures 1–4 on one running service (empty SQLite, the scale database, or PostgreSQL):
 * SMTP ingest, delivery latency, polling and create; `prefix` names the database in the table.
 */
export async function serviceFigures(context: FigureContext, service: ServiceProcess, db: BenchDb, prefix = ''): Promise<ResultRow[]> {
  const { options, smtpSource, smtpFloor, httpFloor } = context;
  // Quick mode repeats only one case per figure on the scale and PostgreSQL databases.
  const subset = options.quick && prefix !== '';
  const rows: ResultRow[] = [];
  if (options.phases.has('smtp')) {
    const target = { port: service.smtpPort, pid: service.pid, db };
    const floor = { port: smtpFloor.port, pid: smtpFloor.pid };
    const filter = subset ? QUICK_SMTP_CASE : options.caseFilter;
    rows.push(...(await smtpFigures(smtpSource, target, floor, options.runs, options.seconds, `${prefix}1 SMTP ingest`, filter)));
  }
  if (options.phases.has('latency') && !subset) {
    const polled = await pollableInbox(service);
    rows.push(await deliveryLatency(smtpSource, service, db, polled, options.runs * options.seconds, prefix));
  }
  if (options.phases.has('http')) rows.push(...(await httpFigures(service, httpFloor, options.runs, options.seconds, prefix, subset)));
  return rows;
}

/** The one SMTP case quick mode repeats on the scale and PostgreSQL databases. */
const QUICK_SMTP_CASE = '4 KB, many per conn, 10 conns';
