import { checkInbox, createInbox, type BenchInbox } from './api-client.js';
import { DOMAIN, RECIPIENT_LOCAL, type BenchDb } from './bench-db.js';
import { runHttpLoadProcess } from './http-load.js';
import type { ResultRow } from './result-table.js';
import type { ServiceProcess } from './service-process.js';
import { buildMessage, sendOne } from './smtp-client.js';
import { runSmtpSource } from './smtp-source.js';
import { percentile } from './stats.js';

/** Background load: this many smtp-source sessions each sending one 4 KB message a second. */
const BACKGROUND_SMTP_SESSIONS = 50;
/** Background polling: requests per second on a 20-message inbox. */
const BACKGROUND_POLLS_PER_SECOND = 200;
/** Probes per inbox before a fresh one (a free inbox holds 100 messages). */
const PROBES_PER_INBOX = 90;
/** Probe clients running at once. */
const PROBE_CLIENTS = 5;
/** Target of figure 2. */
const TARGET_P99_MS = 50;

/**
 * Figure 2: time from the 250 reply to the message being visible in /api/check, under a
 * moderate load (50 messages/s over 50 SMTP sessions plus 200 polls/s). A probe sends one
 * message on its own connection, notes the 250, then polls with `since` until it shows.
 */
export async function deliveryLatency(
  binary: string,
  service: ServiceProcess,
  db: BenchDb,
  polled: { inbox: BenchInbox },
  seconds: number,
  prefix = '',
): Promise<ResultRow> {
  const abort = new AbortController();
  const backgroundMessages = BACKGROUND_SMTP_SESSIONS * (seconds + 10);
  await db.ensureRecipients(backgroundMessages);
  const smtpLoad = runSmtpSource(
    binary,
    {
      port: service.smtpPort,
      sessions: BACKGROUND_SMTP_SESSIONS,
      messages: backgroundMessages,
      size: 4096,
      keepConnection: true,
      recipient: `${RECIPIENT_LOCAL}@${DOMAIN}`,
      waitSeconds: 1,
    },
    abort.signal,
  );
  // In a process of its own: in this one its work would delay the probes' own timing.
  const pollLoad = runHttpLoadProcess({
    url: `${service.baseUrl}/api/check/${polled.inbox.username}`,
    headers: { cookie: polled.inbox.cookie },
    connections: 10,
    seconds: seconds + 2,
    overallRate: BACKGROUND_POLLS_PER_SECOND,
  });
  const latencies: number[] = [];
  const sendTimes: number[] = [];
  // Let the background load reach its steady rate first.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const end = Date.now() + seconds * 1000;
  // Several probes at once: one SMTP transaction takes over 100 ms (smtp-server's greeting delay).
  await Promise.all(Array.from({ length: PROBE_CLIENTS }, () => probeLoop(service, end, latencies, sendTimes)));
  abort.abort();
  await Promise.allSettled([smtpLoad, pollLoad]);
  const p50 = percentile(latencies, 0.5);
  const p99 = percentile(latencies, 0.99);
  console.error(`bench: ${prefix}2 delivery latency: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms over ${latencies.length} probes`);
  return {
    figure: `${prefix}2 delivery latency`,
    label: `250 → visible, p99 (${BACKGROUND_SMTP_SESSIONS} msg/s + ${BACKGROUND_POLLS_PER_SECOND} polls/s)`,
    value: p99,
    unit: 'ms',
    detail: `p50 ${p50.toFixed(1)} ms; ${latencies.length} probes; SMTP transaction p50/p99 ${percentile(sendTimes, 0.5).toFixed(0)}/${percentile(sendTimes, 0.99).toFixed(0)} ms`,
    target: `p99 < ${TARGET_P99_MS} ms`,
    met: p99 < TARGET_P99_MS,
  };
}

/** One probe client until `end`: send, note the 250, poll with `since` until it is visible. */
async function probeLoop(service: ServiceProcess, end: number, latencies: number[], sendTimes: number[]): Promise<void> {
  const from = 'probe@bench.example';
  let inbox: BenchInbox | undefined;
  let newest: string | undefined;
  let inInbox = 0;
  while (Date.now() < end) {
    if (inbox === undefined || inInbox >= PROBES_PER_INBOX) {
      inbox = await createInbox(service.baseUrl);
      newest = undefined;
      inInbox = 0;
    }
    const sent = performance.now();
    await sendOne(service.smtpPort, from, inbox.email, buildMessage(from, inbox.email, 'latency probe', 2048));
    const accepted = performance.now();
    let ids: string[] = [];
    while (ids.length === 0) ids = (await checkInbox(service.baseUrl, inbox, newest)).ids;
    latencies.push(performance.now() - accepted);
    sendTimes.push(accepted - sent);
    newest = ids[0];
    inInbox += 1;
  }
}
