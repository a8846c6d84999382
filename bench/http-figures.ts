import { bodyBytes, checkInbox, createInbox, type BenchInbox } from './api-client.js';
import type { FloorServer } from './floor-servers.js';
import { runHttpLoad, type HttpLoad, type HttpLoadResult } from './http-load.js';
import type { ResultRow } from './result-table.js';
import type { ServiceProcess } from './service-process.js';
import { buildMessage, sendOne } from './smtp-client.js';
import { median } from './stats.js';

/** Messages in the polled inbox, and their size (figure 3). */
export const POLLED_MESSAGES = 20;
export const POLLED_MESSAGE_BYTES = 1024;

/** Medians of `runs` autocannon runs. */
export interface HttpFigure {
  rps: number;
  p50: number;
  p99: number;
  max: number;
  failures: number;
}

/** Runs the same load `runs` times and takes medians (max and failures: the worst/the sum). */
export async function measureHttp(load: HttpLoad, runs: number): Promise<HttpFigure> {
  const results: HttpLoadResult[] = [];
  for (let i = 0; i < runs; i += 1) results.push(await runHttpLoad(load));
  return {
    rps: median(results.map((r) => r.rps)),
    p50: median(results.map((r) => r.p50)),
    p99: median(results.map((r) => r.p99)),
    max: Math.max(...results.map((r) => r.max)),
    failures: results.reduce((sum, r) => sum + r.failures, 0),
  };
}

/** A session whose inbox holds POLLED_MESSAGES messages of about 1 KB, sent over SMTP. */
export async function pollableInbox(service: ServiceProcess): Promise<{ inbox: BenchInbox; newest: string }> {
  const inbox = await createInbox(service.baseUrl);
  for (let i = 0; i < POLLED_MESSAGES; i += 1) {
    const from = 'sender@bench.example';
    await sendOne(service.smtpPort, from, inbox.email, buildMessage(from, inbox.email, `Your code is ${100000 + i}`, POLLED_MESSAGE_BYTES));
  }
  const { ids } = await checkInbox(service.baseUrl, inbox);
  if (ids.length !== POLLED_MESSAGES) throw new Error(`polled inbox holds ${ids.length} messages, expected ${POLLED_MESSAGES}`);
  return { inbox, newest: ids[0] ?? '' };
}

/** Published targets of figures 3 and 4 (docs/benchmarks.md "Method"), as shares of the HTTP floor. */
const CHECK_TARGET = 0.25;
const SINCE_TARGET = 0.4;
const NOT_MODIFIED_TARGET = 0.4;
const CREATE_TARGET = 0.2;

function row(figure: string, label: string, measured: HttpFigure, floor: HttpFigure, bytes: number, share?: number): ResultRow {
  const result: ResultRow = {
    figure,
    label,
    value: measured.rps,
    unit: 'req/s',
    floor: floor.rps,
    detail: `p50/p99 ${measured.p50}/${measured.p99} ms (floor ${floor.p50}/${floor.p99}); body ${bytes} B${measured.failures > 0 ? `; **${measured.failures} failed**` : ''}`,
  };
  if (share !== undefined) {
    result.target = `≥ ${share * 100} % of floor`;
    result.met = measured.rps >= share * floor.rps && measured.failures === 0;
  }
  return result;
}

/**
 * Figures 3 and 4: /api/check on a 20-message inbox and with `since` at the newest message,
 * at 10 and 50 connections, and /api/create for new sessions; each against the node:http
 * floor answering a body of the same size, measured back to back.
 */
export async function httpFigures(
  service: ServiceProcess,
  floor: FloorServer,
  runs: number,
  seconds: number,
  prefix = '',
  subset = false,
): Promise<ResultRow[]> {
  const rows: ResultRow[] = [];
  const { inbox, newest } = await pollableInbox(service);
  const headers = { cookie: inbox.cookie };
  const checkUrl = `${service.baseUrl}/api/check/${inbox.username}`;
  const sinceUrl = `${checkUrl}?since=${newest}`;
  const etag = (await fetch(checkUrl, { headers })).headers.get('etag') ?? '';
  const cases = [
    { label: 'check, 20 messages', url: checkUrl, share: CHECK_TARGET },
    { label: 'check since newest (nothing new)', url: sinceUrl, share: SINCE_TARGET },
    // The floor answers a 304 too (bench/floor-http-server.ts): no body on either side.
    { label: 'check answered 304 to If-None-Match', url: checkUrl, share: NOT_MODIFIED_TARGET, notModified: true },
  ];
  for (const { label, url, share, notModified = false } of cases) {
    const caseHeaders = notModified ? { ...headers, 'if-none-match': etag } : headers;
    const expectStatus = notModified ? 304 : undefined;
    const bytes = notModified ? 0 : await bodyBytes(url, headers);
    const floorPath = notModified ? '304' : String(bytes);
    for (const connections of subset ? [10] : [10, 50]) {
      const onFloor = await measureHttp({ url: `http://127.0.0.1:${floor.port}/${floorPath}`, connections, seconds, expectStatus }, runs);
      const measured = await measureHttp({ url, connections, seconds, headers: caseHeaders, expectStatus }, runs);
      rows.push(row(`${prefix}3 polling`, `${label}, ${connections} conns`, measured, onFloor, bytes, share));
      console.error(`bench: ${prefix}3 polling: ${label}, ${connections} conns: ${measured.rps.toFixed(0)} req/s (floor ${onFloor.rps.toFixed(0)})`);
    }
  }
  if (subset) return rows;
  // Each request without a cookie makes a session and its inbox: two commits.
  const createUrl = `${service.baseUrl}/api/create`;
  const createBytes = await bodyBytes(createUrl);
  const onFloor = await measureHttp({ url: `http://127.0.0.1:${floor.port}/${createBytes}`, connections: 10, seconds }, runs);
  const measured = await measureHttp({ url: createUrl, connections: 10, seconds }, runs);
  rows.push(row(`${prefix}4 create`, 'create, new session, 10 conns', measured, onFloor, createBytes, CREATE_TARGET));
  console.error(`bench: ${prefix}4 create: ${measured.rps.toFixed(0)} req/s (floor ${onFloor.rps.toFixed(0)})`);
  return rows;
}
