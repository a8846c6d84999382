/**
 * `npx tsx bench/live-streams.ts [--streams N] [--per-inbox K] [--rate R] [--seconds S] [--mode sse|wait]`:
 * live mail on one node (SQLite). Opens N held clients (event streams, or long-polls with
 * `wait=60` re-issued after each answer) spread over N/K inboxes, then sends R messages/s
 * over SMTP to random inboxes for S seconds and measures, for every client of the inbox, the
 * time from the 250 reply to the event (or answer) arriving. Prints the server's RSS with all
 * clients open and the latency percentiles. Not part of `npm run bench` (yet): see docs/scaling.md.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInbox, type BenchInbox } from './api-client.js';
import { memoryMegabytes } from './process-stats.js';
import { ensureBuilt, startService } from './service-process.js';
import { buildMessage, sendOne } from './smtp-client.js';
import { percentile } from './stats.js';

function arg(name: string, fallback: number | string): string {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? String(fallback) : (process.argv[at + 1] ?? String(fallback));
}

const STREAMS = Number(arg('streams', 2000));
const PER_INBOX = Number(arg('per-inbox', 10));
const RATE = Number(arg('rate', 100));
const SECONDS = Number(arg('seconds', 10));
const MODE = arg('mode', 'sse');
/** Seconds to let the server take in every client before sending (long-polls are opened without waiting for the server). */
const SETTLE = Number(arg('settle', MODE === 'sse' ? 2 : 20));
/** SMTP senders in parallel (each paced): enough for RATE on a loaded machine. */
const SENDERS = 10;

/** One socket per client: an agent with no pooling limit. */
const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
/** When the 250 of each subject arrived. */
const sentAt = new Map<string, number>();
/** When each client got each subject (an event may beat the 250 to the client: latency 0). */
const arrivals: { subject: string; at: number }[] = [];

/** An event stream that records the latency of every message event. */
function openStream(baseUrl: string, inbox: BenchInbox): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}/api/inbox/${inbox.username}/events`, { agent, headers: { cookie: inbox.cookie, accept: 'text/event-stream' } }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`stream answered ${res.statusCode}`));
      res.setEncoding('utf8');
      let buffer = '';
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const subject = /"subject":"(bench-[0-9]+)"/.exec(block)?.[1];
          if (subject !== undefined) arrivals.push({ subject, at: performance.now() });
        }
      });
      resolve();
    });
    req.on('error', reject);
    req.end();
  });
}

/** A long-poll loop: wait=60 with since, re-issued after each answer. */
function startWaiter(baseUrl: string, inbox: BenchInbox, stop: AbortSignal): void {
  let since = '';
  const once = () => {
    if (stop.aborted) return;
    const query = `wait=60${since === '' ? '' : `&since=${since}`}`;
    const req = request(`${baseUrl}/api/check/${inbox.username}?${query}`, { agent, headers: { cookie: inbox.cookie } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        const now = performance.now();
        try {
          const body = JSON.parse(text) as { emails?: { id: string; subject: string }[] };
          for (const email of body.emails ?? []) if (email.subject.startsWith('bench-')) arrivals.push({ subject: email.subject, at: now });
          since = body.emails?.[0]?.id ?? since;
        } catch {
          // A 429 or a cut answer: just ask again.
        }
        once();
      });
    });
    req.on('error', () => setTimeout(once, 100));
    req.end();
  };
  once();
}

async function main(): Promise<void> {
  ensureBuilt();
  const dir = mkdtempSync(join(tmpdir(), 'tempinbox-live-bench-'));
  const service = await startService(`sqlite:${join(dir, 'db.sqlite')}`, { FREE_MAX_MESSAGES: '100000', FREE_MAX_BYTES: '1000000000' });
  const stop = new AbortController();
  try {
    const inboxes: BenchInbox[] = [];
    const count = Math.ceil(STREAMS / PER_INBOX);
    for (let i = 0; i < count; i += 1) inboxes.push(await createInbox(service.baseUrl));
    const opening = performance.now();
    for (let i = 0; i < STREAMS; i += 1) {
      const inbox = inboxes[i % count] as BenchInbox;
      if (MODE === 'sse') await openStream(service.baseUrl, inbox);
      else startWaiter(service.baseUrl, inbox, stop.signal);
    }
    await new Promise((resolve) => setTimeout(resolve, SETTLE * 1000));
    const rssOpen = memoryMegabytes(service.pid);
    console.error(`live bench: ${STREAMS} ${MODE} clients open on ${count} inboxes in ${((performance.now() - opening) / 1000).toFixed(1)} s; server RSS ${rssOpen.rss.toFixed(0)} MB`);

    let sequence = 0;
    let sent = 0;
    const deadline = performance.now() + SECONDS * 1000;
    const interval = (1000 * SENDERS) / RATE;
    await Promise.all(
      Array.from({ length: SENDERS }, async (_, sender) => {
        await new Promise((resolve) => setTimeout(resolve, (interval * sender) / SENDERS));
        while (performance.now() < deadline) {
          const started = performance.now();
          const subject = `bench-${(sequence += 1)}`;
          const inbox = inboxes[Math.floor(Math.random() * count)] as BenchInbox;
          await sendOne(service.smtpPort, 'bench@example.org', inbox.email, buildMessage('bench@example.org', inbox.email, subject, 2048));
          sentAt.set(subject, performance.now());
          sent += 1;
          const left = interval - (performance.now() - started);
          if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
        }
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const rssEnd = memoryMegabytes(service.pid);
    const expected = sent * PER_INBOX;
    const latencies = arrivals.flatMap(({ subject, at }) => {
      const acked = sentAt.get(subject);
      return acked === undefined ? [] : [Math.max(0, at - acked)];
    });
    console.log(
      JSON.stringify({
        mode: MODE,
        clients: STREAMS,
        inboxes: count,
        messages_per_second: Number((sent / SECONDS).toFixed(1)),
        messages: sent,
        events_expected: expected,
        events_received: latencies.length,
        p50_ms: Number(percentile(latencies, 0.5).toFixed(1)),
        p99_ms: Number(percentile(latencies, 0.99).toFixed(1)),
        max_ms: Number(Math.max(...latencies).toFixed(1)),
        rss_open_mb: Number(rssOpen.rss.toFixed(0)),
        rss_peak_mb: Number(rssEnd.peak.toFixed(0)),
      }),
    );
  } finally {
    stop.abort();
    agent.destroy();
    await service.server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
