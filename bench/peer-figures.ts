import type { BenchDb } from './bench-db.js';
import { startFreshService } from './fresh-service.js';
import { startMailDev, type MailDevPeer } from './maildev-peer.js';
import { peerReadRows } from './peer-reads.js';
import type { ResultRow } from './result-table.js';
import { newestVerdicts } from './sender-auth-figures.js';
import type { FigureContext } from './service-figures.js';
import { measureIngestAlternating, type IngestCase, type IngestFigure, type SmtpTarget } from './smtp-ingest.js';

/** Figure 9's name in the table. */
export const PEER_FIGURE = '9 MailDev';

/** The ingest cases of the comparison: figure 1's, at 10 connections each sending many messages. */
const CASE_4K: IngestCase = { label: '4 KB, many per conn, 10 conns', size: 4096, sessions: 10, keepConnection: true };
const CASE_100K: IngestCase = { label: '100 KB, many per conn, 10 conns', size: 102_400, sessions: 10, keepConnection: true };

// The published targets of figure 9 (docs/benchmarks.md "Method").
/** tempinbox takes in at least this many times MailDev's messages per second, 4 KB. */
const INGEST_RATIO_TARGET = 3;
/** Server CPU of one 4 KB message, all threads, µs. */
const CPU_4K_TARGET_US = 400;
/** A 100 KB message costs at most this many times a 4 KB one (server CPU, all threads). */
const SIZE_COST_TARGET = 2.5;

const us = (ms: number): string => (Number.isFinite(ms) ? `${Math.round(ms * 1000).toLocaleString('en-US')} µs` : '—');
const rate = (figure: IngestFigure): string => (Number.isFinite(figure.rate) ? `${Math.round(figure.rate).toLocaleString('en-US')} msg/s` : '—');

/** MailDev as a BenchDb: nothing to seed (it takes any recipient), its store counted over its API. */
function maildevCounter(peer: MailDevPeer): BenchDb {
  return { ensureRecipients: () => Promise.resolve(), countMessages: () => peer.count(), close: () => Promise.resolve() };
}

/** One target's ingest row: its rate against the floor's, with its CPU per message. */
function ingestRow(label: string, figure: IngestFigure, floor: IngestFigure, extra = ''): ResultRow {
  const verified = figure.verified === null ? '' : figure.verified ? '; stored = sent' : '; **stored ≠ sent**';
  return {
    figure: PEER_FIGURE,
    label,
    value: figure.rate,
    unit: 'msg/s',
    floor: floor.rate,
    detail: figure.error !== undefined ? `failed: ${figure.error.slice(0, 200)}` : `CPU ${us(figure.cpuMsPerMessage)}/msg, main thread ${us(figure.mainCpuMsPerMessage)} (floor ${us(floor.cpuMsPerMessage)})${verified}${extra}`,
  };
}

/** A judged row: `value` against its bound; a figure that failed (NaN) is not met. */
function judged(label: string, value: number, unit: string, detail: string, target: string, met: (value: number) => boolean): ResultRow {
  return { figure: PEER_FIGURE, label, value, unit, detail, target, met: Number.isFinite(value) && met(value) };
}

/**
 * Figure 9: tempinbox beside MailDev (bench/maildev-peer.ts), each at its defaults: tempinbox
 * with every feature on (sender checks against its loopback resolver, codes, links, quotas, a
 * commit fsynced before each 250), MailDev keeping mail in memory. On the same load in
 * alternating runs with the SMTP floor (bench/smtp-ingest.ts): 4 KB and 100 KB messages, many
 * per connection at 10 connections; then reading a 20-message inbox (bench/peer-reads.ts).
 * Judged: ingest ≥ 3× MailDev, ≤ 400 µs of server CPU per 4 KB message, a 100 KB message at
 * most 2.5× a 4 KB one, the read ≥ 2× MailDev's full list. MailDev is emptied before each
 * of its runs, so that the mail of earlier runs does not slow it.
 */
export async function peerFigures(context: FigureContext): Promise<ResultRow[]> {
  const { options, smtpSource, smtpFloor } = context;
  const rows: ResultRow[] = [];
  const service = await startFreshService(options.serviceEnv);
  let peer: MailDevPeer | undefined;
  try {
    try {
      peer = await startMailDev();
    } catch (error) {
      rows.push({ figure: PEER_FIGURE, label: 'MailDev', value: Number.NaN, unit: '', detail: `failed: ${String(error).slice(0, 300)}` });
    }
    const started = peer;
    const name = `MailDev ${started?.version ?? ''}`.trim();
    const targets: SmtpTarget[] = [{ port: smtpFloor.port, pid: smtpFloor.pid }, service.target];
    if (started !== undefined) targets.push({ port: started.smtpPort, pid: started.pid, db: maildevCounter(started), reset: () => started.clear() });
    const measure = async (testCase: IngestCase): Promise<{ floor: IngestFigure; service: IngestFigure; peer?: IngestFigure }> => {
      const [floor, measured, onPeer] = await measureIngestAlternating(smtpSource, targets, testCase, options.runs, options.seconds);
      if (floor === undefined || measured === undefined) throw new Error('no ingest figure');
      return { floor, service: measured, peer: onPeer };
    };

    const questionsBefore = { service: service.service.dns.queryCount, peer: started?.dns.queryCount ?? 0 };
    const small = await measure(CASE_4K);
    if (small.peer !== undefined) {
      const peerQuestions = (started?.dns.queryCount ?? 0) - questionsBefore.peer;
      rows.push(ingestRow(`${CASE_4K.label}: ${name}`, small.peer, small.floor, `; mail in memory, no fsync, no checks; ${peerQuestions} DNS questions to its loopback DNS server`));
    }
    const questions = service.service.dns.queryCount - questionsBefore.service;
    rows.push(ingestRow(`${CASE_4K.label}: tempinbox, every feature on`, small.service, small.floor, `; ${newestVerdicts(service.dbPath)}; ${questions} DNS questions to its loopback DNS server`));
    if (small.peer !== undefined) {
      const ratio = small.service.rate / small.peer.rate;
      const detail = `${rate(small.service)} ÷ ${rate(small.peer)}, medians of ${options.runs} alternating runs`;
      rows.push(judged(`4 KB ingest: tempinbox ÷ ${name}`, ratio, '×', detail, `≥ ${INGEST_RATIO_TARGET}×`, (r) => r >= INGEST_RATIO_TARGET));
    }
    const peerCpu = small.peer === undefined ? '' : `; ${name} ${us(small.peer.cpuMsPerMessage)}`;
    const cpuDetail = `all threads (utime+stime, /proc); main thread ${us(small.service.mainCpuMsPerMessage)}${peerCpu}`;
    rows.push(judged('server CPU per 4 KB message, every feature on', small.service.cpuMsPerMessage * 1000, 'µs/msg', cpuDetail, `≤ ${CPU_4K_TARGET_US} µs/msg`, (v) => v <= CPU_4K_TARGET_US));
    console.error(`bench: ${PEER_FIGURE}: 4 KB: tempinbox ${rate(small.service)} at ${us(small.service.cpuMsPerMessage)}/msg; ${name} ${small.peer === undefined ? '—' : `${rate(small.peer)} at ${us(small.peer.cpuMsPerMessage)}/msg`}`);

    const large = await measure(CASE_100K);
    if (large.peer !== undefined) rows.push(ingestRow(`${CASE_100K.label}: ${name}`, large.peer, large.floor));
    rows.push(ingestRow(`${CASE_100K.label}: tempinbox, every feature on`, large.service, large.floor));
    const sizeCost = large.service.cpuMsPerMessage / small.service.cpuMsPerMessage;
    const sizeDetail = `${us(large.service.cpuMsPerMessage)} ÷ ${us(small.service.cpuMsPerMessage)}, all threads`;
    rows.push(judged('server CPU per 100 KB message ÷ per 4 KB message', sizeCost, '×', sizeDetail, `≤ ${SIZE_COST_TARGET}×`, (r) => r <= SIZE_COST_TARGET));
    console.error(`bench: ${PEER_FIGURE}: 100 KB: tempinbox ${rate(large.service)} at ${us(large.service.cpuMsPerMessage)}/msg`);

    rows.push(...(await peerReadRows(service.service, started, options.runs, options.seconds, PEER_FIGURE)));
    return rows;
  } finally {
    await peer?.stop();
    await service.stop();
  }
}
