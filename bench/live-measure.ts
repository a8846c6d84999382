import { createInbox, type BenchInbox } from './api-client.js';
import { assertFileLimit, LiveClients } from './live-clients.js';
import { sendPaced } from './live-sender.js';
import { cpuSeconds, memoryMegabytes, waitUntilIdle } from './process-stats.js';
import { percentile } from './stats.js';

/**
 * One measurement of figure 8 (docs/benchmarks.md): `clients` held clients (event streams or
 * long-polls) on `clientNode`, 10 per inbox, then `rate` messages/s over SMTP to `smtpNode`
 * for `seconds`, timing each message from its 250 to its arrival at every client of its inbox.
 */

/** Held clients per inbox: the per-session cap (HELD_PER_SESSION), like a test run's workers on one inbox. */
export const CLIENTS_PER_INBOX = 10;
/** Longest wait for the server to take in every client. */
const SETTLE_LIMIT_MS = 120_000;
/** How often the server's RSS is sampled while the clients are open. */
export const RSS_SAMPLE_MS = 200;
/** Time after the last 250 for the last events to arrive before counting. */
const TAIL_MS = 2000;
/**
 * How long every client is held, idle, before sending: what a node holds for its held
 * clients is measured once the work of opening them is over and V8 has run its collections.
 * On Node 24 its memory reducer, which would give back the opening burst's garbage, starts
 * only after a watchdog of about 100 s (docs/architecture.md "Memory"); held clients are
 * mostly live memory (node:http's exchanges), which no collection gives back.
 */
export const HOLD_MS = 25_000;

/** Messages/s of the warm-up send, which sends for 1/WARM_UP_RATE s: one message. */
const WARM_UP_RATE = 10;

/** A node to measure: where its HTTP API and SMTP listen, and its process id. */
export interface LiveNode {
  pid: number;
  baseUrl: string;
  smtpPort: number;
}

export interface LiveRun {
  mode: 'sse' | 'wait';
  clients: number;
  rate: number;
  seconds: number;
  /** Node the clients hold their requests on. */
  clientNode: LiveNode;
  /** Node the messages are sent to (another node on the same PostgreSQL for the cross-node figure). */
  smtpNode: LiveNode;
  /** How long every client is held idle before sending (ms; HOLD_MS unless a run does not judge memory). */
  holdMs?: number;
  /** Called with every client open, before sending (the standalone CLI pauses there for inspection). */
  onOpen?: () => Promise<void>;
}

export interface LiveResult {
  inboxes: number;
  /** Messages/s reached (250s over the sending time). */
  rateReached: number;
  sent: number;
  sendFailures: number;
  eventsExpected: number;
  eventsReceived: number;
  clientFailures: number;
  /** Their reasons, e.g. "HTTP 503 ×3, ECONNRESET ×1". */
  failureReasons: string;
  p50: number;
  p99: number;
  max: number;
  /**
   * Server RSS (client node), MB: with no client open; as soon as all are open; after holding
   * them HOLD_MS idle; the highest sample from the first opening to the end of the hold; the
   * highest while sending to them.
   */
  rssIdle: number;
  rssOpen: number;
  rssHeld: number;
  rssOpenPeak: number;
  rssSendPeak: number;
  /** process.memoryUsage() of the client node with all clients open, MB (from /metrics). */
  heapUsed: number;
  heapTotal: number;
  external: number;
  /** Seconds to open every client and for the server to take them in. */
  openSeconds: number;
  /** CPU of the sending node and, when it is another, the client node (all threads) per message sent, ms. */
  cpuPerMessageMs: number;
}

/** Resolves once the process is idle (process-stats.ts); throws past SETTLE_LIMIT_MS. */
async function settled(pid: number): Promise<void> {
  if (!(await waitUntilIdle(pid, SETTLE_LIMIT_MS))) throw new Error(`live bench: the server did not settle within ${SETTLE_LIMIT_MS / 1000} s`);
}

/** One gauge of the node's Prometheus text, in MB. */
function gauge(metrics: string, name: string): number {
  return Number(new RegExp(`^tempinbox_${name} (\\S+)$`, 'm').exec(metrics)?.[1] ?? Number.NaN) / 2 ** 20;
}

export async function measureLive(run: LiveRun): Promise<LiveResult> {
  assertFileLimit(run.clients);
  const inboxes: BenchInbox[] = [];
  const count = Math.ceil(run.clients / CLIENTS_PER_INBOX);
  for (let i = 0; i < count; i += 1) inboxes.push(await createInbox(run.clientNode.baseUrl));
  // One message first, to an inbox no client follows: a node that has received mail runs its
  // mail-parse worker (started on the first message, ~20 MB), and every RSS below includes it.
  const warmed = await sendPaced(run.smtpNode.smtpPort, [await createInbox(run.smtpNode.baseUrl)], WARM_UP_RATE, 1 / WARM_UP_RATE);
  if (warmed.sent !== 1) throw new Error('live bench: the warm-up message was not accepted');
  await settled(run.clientNode.pid);
  const rssIdle = memoryMegabytes(run.clientNode.pid).rss;

  const clients = new LiveClients(run.clientNode.baseUrl);
  // The highest RSS of the current phase (opening and hold, then sending).
  let rssPeak = 0;
  const sampler = setInterval(() => {
    try {
      rssPeak = Math.max(rssPeak, memoryMegabytes(run.clientNode.pid).rss);
    } catch {
      // The server died: the run fails where it next talks to it.
    }
  }, RSS_SAMPLE_MS);
  try {
    const opening = performance.now();
    const streams: Promise<void>[] = [];
    for (let i = 0; i < run.clients; i += 1) {
      const inbox = inboxes[i % count] as BenchInbox;
      if (run.mode === 'sse') streams.push(clients.openStream(inbox));
      else clients.startWaiter(inbox);
    }
    await Promise.all(streams);
    await settled(run.clientNode.pid);
    const openSeconds = (performance.now() - opening) / 1000;
    const rssOpen = memoryMegabytes(run.clientNode.pid).rss;
    const metrics = await (await fetch(`${run.clientNode.baseUrl}/metrics`)).text();
    if (clients.failures > 0) throw new Error(`live bench: ${clients.failures} of ${run.clients} ${run.mode} clients failed to open: ${[...clients.failureReasons].join('; ')}`);
    await new Promise((resolve) => setTimeout(resolve, run.holdMs ?? HOLD_MS));
    const rssHeld = memoryMegabytes(run.clientNode.pid).rss;
    const rssOpenPeak = Math.max(rssPeak, rssOpen, rssHeld);
    await run.onOpen?.();

    rssPeak = memoryMegabytes(run.clientNode.pid).rss;
    const nodes = [...new Set([run.clientNode.pid, run.smtpNode.pid])];
    const cpuBefore = nodes.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
    const sent = await sendPaced(run.smtpNode.smtpPort, inboxes, run.rate, run.seconds);
    await new Promise((resolve) => setTimeout(resolve, TAIL_MS));
    const cpu = nodes.reduce((sum, pid) => sum + cpuSeconds(pid), 0) - cpuBefore;
    const latencies = clients.arrivals.flatMap(({ subject, at }) => {
      const acked = sent.ackedAt.get(subject);
      // An event may reach the client before the 250 reaches the sender: latency 0.
      return acked === undefined ? [] : [Math.max(0, at - acked)];
    });
    return {
      inboxes: count,
      rateReached: sent.sent / sent.elapsed,
      sent: sent.sent,
      sendFailures: sent.failed,
      eventsExpected: sent.sent * CLIENTS_PER_INBOX,
      eventsReceived: latencies.length,
      clientFailures: clients.failures,
      failureReasons: [...clients.failureReasons].map(([reason, count]) => `${reason} ×${count}`).join(', '),
      p50: percentile(latencies, 0.5),
      p99: percentile(latencies, 0.99),
      max: latencies.reduce((a, b) => Math.max(a, b), 0),
      rssIdle,
      rssOpen,
      rssHeld,
      rssOpenPeak,
      rssSendPeak: Math.max(rssPeak, memoryMegabytes(run.clientNode.pid).rss),
      heapUsed: gauge(metrics, 'nodejs_heap_size_used_bytes'),
      heapTotal: gauge(metrics, 'nodejs_heap_size_total_bytes'),
      external: gauge(metrics, 'nodejs_external_memory_bytes'),
      openSeconds,
      cpuPerMessageMs: (cpu * 1000) / sent.sent,
    };
  } finally {
    clearInterval(sampler);
    clients.close();
  }
}
