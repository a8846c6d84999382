import { measureHttp, pollableInbox, POLLED_MESSAGE_BYTES, POLLED_MESSAGES, type HttpFigure } from './http-figures.js';
import type { HttpLoad } from './http-load.js';
import type { MailDevPeer } from './maildev-peer.js';
import type { ResultRow } from './result-table.js';
import type { ServiceProcess } from './service-process.js';
import { buildMessage, sendOne } from './smtp-client.js';
import { median } from './stats.js';

/** Connections of the read comparison (figure 3's first case). */
const READ_CONNECTIONS = 10;
/** Published target: tempinbox answers at least this many times MailDev's requests per second. */
const READ_RATIO_TARGET = 2;
/** A setup request (filling, sizing an answer) is answered within this, or the figure fails. */
const SETUP_TIMEOUT_MS = 30_000;
/** An untimed run first on each server, so that neither is measured before its JIT has warmed up. */
const WARM_UP_SECONDS = 1;

/**
 * MailDev holding exactly the messages of figure 3's polled inbox (POLLED_MESSAGES of about
 * POLLED_MESSAGE_BYTES, sent over SMTP); returns the size of its full list's answer.
 */
async function fillMailDev(peer: MailDevPeer): Promise<number> {
  await peer.clear();
  const from = 'sender@bench.example';
  const to = 'reader@tempinbox.test';
  for (let i = 0; i < POLLED_MESSAGES; i += 1) await sendOne(peer.smtpPort, from, to, buildMessage(from, to, `Your code is ${100000 + i}`, POLLED_MESSAGE_BYTES));
  const response = await fetch(`${peer.baseUrl}/api/email`, { signal: AbortSignal.timeout(SETUP_TIMEOUT_MS) });
  const body = await response.text();
  const listed = (JSON.parse(body) as unknown[]).length;
  if (listed !== POLLED_MESSAGES) throw new Error(`MailDev lists ${listed} messages, expected ${POLLED_MESSAGES}`);
  return Buffer.byteLength(body);
}

/** Medians of one-run figures taken in turns (max and failures: the worst, the sum). */
function merged(figures: readonly HttpFigure[]): HttpFigure {
  return {
    rps: median(figures.map((f) => f.rps)),
    p50: median(figures.map((f) => f.p50)),
    p99: median(figures.map((f) => f.p99)),
    max: Math.max(...figures.map((f) => f.max)),
    failures: figures.reduce((sum, f) => sum + f.failures, 0),
  };
}

function readRow(figure: string, label: string, measured: HttpFigure, bytes: number): ResultRow {
  const failed = measured.failures > 0 ? `; **${measured.failures} failed**` : '';
  return { figure, label, value: measured.rps, unit: 'req/s', detail: `p50/p99 ${measured.p50}/${measured.p99} ms; body ${bytes} B${failed}` };
}

/**
 * Figure 9's read: the service's `/api/check` of a 20-message inbox (figure 3's inbox, with its
 * session cookie) against MailDev's full message list, `GET /api/email`, holding the same 20
 * messages: the whole of what a reader of each asks for one inbox. autocannon at 10
 * connections, an untimed warm-up on each, then runs in turns; judged on the ratio of the medians.
 */
export async function peerReadRows(service: ServiceProcess, peer: MailDevPeer | undefined, runs: number, seconds: number, figure: string): Promise<ResultRow[]> {
  const { inbox } = await pollableInbox(service);
  const serviceLoad: HttpLoad = { url: `${service.baseUrl}/api/check/${inbox.username}`, connections: READ_CONNECTIONS, seconds, headers: { cookie: inbox.cookie } };
  const serviceBytes = Buffer.byteLength(await (await fetch(serviceLoad.url, { headers: serviceLoad.headers, signal: AbortSignal.timeout(SETUP_TIMEOUT_MS) })).text());
  const peerBytes = peer === undefined ? 0 : await fillMailDev(peer);
  const peerLoad: HttpLoad = { url: `${peer?.baseUrl ?? ''}/api/email`, connections: READ_CONNECTIONS, seconds };
  if (peer !== undefined) await measureHttp({ ...peerLoad, seconds: WARM_UP_SECONDS }, 1);
  await measureHttp({ ...serviceLoad, seconds: WARM_UP_SECONDS }, 1);
  const onService: HttpFigure[] = [];
  const onPeer: HttpFigure[] = [];
  for (let i = 0; i < runs; i += 1) {
    if (peer !== undefined) onPeer.push(await measureHttp(peerLoad, 1));
    onService.push(await measureHttp(serviceLoad, 1));
  }
  const measured = merged(onService);
  const rows = [readRow(figure, `read a ${POLLED_MESSAGES}-message inbox (/api/check), ${READ_CONNECTIONS} conns: tempinbox`, measured, serviceBytes)];
  if (peer === undefined) return rows;
  const other = merged(onPeer);
  rows.unshift(readRow(figure, `read the full list (GET /api/email, ${POLLED_MESSAGES} messages), ${READ_CONNECTIONS} conns: MailDev ${peer.version}`, other, peerBytes));
  const ratio = measured.rps / other.rps;
  rows.push({
    figure,
    label: `read a ${POLLED_MESSAGES}-message inbox: tempinbox ÷ MailDev ${peer.version}`,
    value: ratio,
    unit: '×',
    detail: `${Math.round(measured.rps).toLocaleString('en-US')} ÷ ${Math.round(other.rps).toLocaleString('en-US')} req/s, medians of ${runs} alternating runs`,
    target: `≥ ${READ_RATIO_TARGET}×`,
    met: Number.isFinite(ratio) && ratio >= READ_RATIO_TARGET && measured.failures + other.failures === 0,
  });
  console.error(`bench: ${figure}: read: tempinbox ${measured.rps.toFixed(0)} req/s, MailDev ${other.rps.toFixed(0)} req/s`);
  return rows;
}
