import { Worker } from 'node:worker_threads';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieClient } from '../helpers/cookie-client.js';
import { runBin, startServer, tempDataDir, type ServerProcess } from '../helpers/server-process.js';

/** Messages in the attacked Premium inbox (PREMIUM_MAX_MESSAGES' default). */
const MESSAGES = 1000;
/** Characters of each stored From (the parser keeps 2,000: maxAddressChars in src/mail/mail-limits.ts). */
const FROM_CHARS = 2000;
/** The longest filter accepted (docs/api.md, check). */
const FILTER_CHARS = 320;
/** Held waits of the attacking session: its cap (docs/api.md "Waiting for mail"). */
const HELD_WAITS = 10;
/** Messages that arrive in the attacked inbox while the waits are held. */
const ARRIVING = 20;
/** What docs/api.md promises a bystander's request: an answer within 100 ms. */
const REQUEST_BOUND_MS = 100;
/**
 * What docs/api.md promises another sender's whole SMTP transaction: done within 500 ms.
 * Asserted for three transactions in four: a transaction is seven round trips, a parse in a
 * worker and an fsynced commit, and with another test file beside this one on 2 cores its
 * 90th percentile reached 520 ms with unfiltered polls as much as with filtered ones.
 */
const SMTP_BOUND_MS = 500;
/**
 * The worst single sample allowed, of the bystanders and of the server's event-loop delay:
 * the bounds above hold for most samples, and one sample may be late by what a 2-core
 * machine shared with other test runs costs (a GC pause, a descheduled process: up to ~900 ms
 * measured under a load average of 20). Before the fix a single check held the event loop
 * 600-3000 ms, and a wake-up of the ten waits up to 10 s.
 */
const WORST_SAMPLE_MS = 1500;
/** How long the attacker sends filtered checks: time for some 40 bystander transactions. */
const CHECK_PHASE_MS = 8000;
/**
 * One filtered check every 100 ms: ten a second, all that one client address may poll
 * (CHECK_PER_ADDRESS in src/domain/fair-use.ts: 600 a minute, whatever its sessions), and
 * three times the pace the slow checks allowed before the fix (57 in 20 s).
 */
const CHECK_INTERVAL_MS = 100;
/** The fill: 1,000 messages through SMTP and fsynced commits; a loaded machine is slower. */
const FILL_TIMEOUT_MS = 180_000;

/**
 * The bystanders, in a worker thread so that the test's own work never delays them: one loop
 * times `GET /healthz` every 25 ms, one times a whole SMTP transaction of another sender to
 * another inbox (connect to the 250 after DATA) 50 ms after the one before; on 'stop' it posts
 * `{healthMs, smtpMs, errors}`.
 */
const PROBE_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const net = require('node:net');
const { baseUrl, smtpPort, to } = workerData;
let running = true;
const healthMs = [], smtpMs = [], errors = [];
const pause = (ms) => new Promise((done) => setTimeout(done, ms));
parentPort.on('message', () => (running = false));
async function health() {
  while (running) {
    const started = performance.now();
    try {
      const answer = await fetch(baseUrl + '/healthz', { signal: AbortSignal.timeout(30000) });
      await answer.text();
      if (answer.status !== 200) errors.push('healthz ' + answer.status);
    } catch (error) { errors.push('healthz ' + error.message); }
    healthMs.push(performance.now() - started);
    await pause(25);
  }
}
function transaction(index) {
  return new Promise((done) => {
    const socket = net.connect({ port: smtpPort, host: '127.0.0.1' });
    socket.setEncoding('latin1');
    const steps = ['EHLO bystander.example', 'MAIL FROM:<bystander@example.org>', 'RCPT TO:<' + to + '>', 'DATA',
      'From: bystander@example.org\\r\\nTo: ' + to + '\\r\\nSubject: bystander ' + index + '\\r\\n\\r\\nhello\\r\\n.', 'QUIT'];
    let buffer = '', step = 0;
    const fail = (why) => { errors.push('smtp ' + why); socket.destroy(); done(); };
    socket.setTimeout(30000, () => fail('timeout'));
    socket.on('error', (error) => fail(error.message));
    socket.on('data', (chunk) => {
      buffer += chunk;
      const match = /(?:^|\\r\\n)(\\d{3}) [^\\r\\n]*\\r\\n$/.exec(buffer);
      if (match === null) return;
      const code = match[1];
      buffer = '';
      if (step === 6) return;
      if (step === 5) {
        if (code !== '250') return fail('data ' + code);
        step = 6;
        smtpMs.push(performance.now() - started);
        socket.end(steps[5] + '\\r\\n');
        return done();
      }
      if (!/^[23]/.test(code)) return fail('step ' + step + ' ' + code);
      socket.write(steps[step] + '\\r\\n');
      step += 1;
    });
    const started = performance.now();
  });
}
async function smtp() {
  for (let i = 0; running; i += 1) {
    await transaction(i);
    await pause(50);
  }
}
Promise.all([health(), smtp()]).then(() => parentPort.postMessage({ healthMs, smtpMs, errors }));
`;

/** What the bystanders measured. */
interface ProbeResult {
  healthMs: number[];
  smtpMs: number[];
  errors: string[];
}

/** Starts the bystanders; `stop` yields their timings. */
function startProbes(server: ServerProcess, to: string): { stop: () => Promise<ProbeResult> } {
  const worker = new Worker(PROBE_SOURCE, { eval: true, workerData: { baseUrl: server.baseUrl, smtpPort: server.smtpPort, to } });
  const result = new Promise<ProbeResult>((done) => worker.once('message', (message: ProbeResult) => done(message)));
  return {
    stop: async () => {
      worker.postMessage('stop');
      const measured = await result;
      await worker.terminate();
      return measured;
    },
  };
}

/** The p-th percentile (0-100) of some samples. */
function percentile(samples: readonly number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? Number.NaN);
}

/** The server's event-loop delay since the previous scrape (its own monitorEventLoopDelay), in ms. */
async function loopDelay(server: ServerProcess): Promise<{ maxMs: number; p99Ms: number }> {
  const text = await (await fetch(`${server.baseUrl}/metrics`)).text();
  const gauge = (name: string) => Number(new RegExp(`^tempinbox_nodejs_eventloop_lag_${name}_seconds (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN) * 1000;
  return { maxMs: Math.round(gauge('max')), p99Ms: Math.round(gauge('p99')) };
}

/** A message whose From is FROM_CHARS characters: the worst case of a substring search is a run of one letter. */
function longFromMessage(to: string, index: number): Buffer {
  const name = 'a'.repeat(FROM_CHARS - '<s@example.org>'.length - 1);
  return Buffer.from(`From: ${name} <s@example.org>\r\nTo: ${to}\r\nSubject: ${'a'.repeat(400)} ${index}\r\n\r\nbody ${index}\r\n`);
}

/** A near miss of the stored From and subject: FILTER_CHARS characters that match everywhere but the last. */
function nearMiss(last: string): string {
  return `${'a'.repeat(FILTER_CHARS - 1)}${last}`;
}

/**
 * Filters cost bounded time (docs/api.md, check: "Filters"): one Premium session with 1,000
 * messages whose From is 2,000 characters, filtered checks with 320-character near misses, and
 * ten held waits with distinct filters while mail arrives, measured as other clients see it.
 */
describe('filters under 1,000 messages with 2 KB From headers (SQLite file)', () => {
  let server: ServerProcess;
  const data = tempDataDir();
  const env = { DATABASE_URL: data.databaseUrl, RATE_LIMITS: 'off', PREMIUM_MAX_MESSAGES: String(MESSAGES + ARRIVING + 10) };
  let attacker: CookieClient;
  let inbox: { email: string; username: string };
  let bystanderInbox: { email: string };

  beforeAll(async () => {
    server = await startServer(env);
    attacker = new CookieClient(server.baseUrl);
    expect((await attacker.get('/api/create')).status).toBe(200);
    const minted = await runBin(['license', 'create'], env);
    expect(minted.code).toBe(0);
    expect((await attacker.postJson('/api/premium/redeem', { key: minted.stdout.trim() })).status).toBe(200);
    inbox = (await attacker.get('/api/create')).json;
    bystanderInbox = (await new CookieClient(server.baseUrl).get('/api/create')).json;
    const started = performance.now();
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, ignoreTLS: true, pool: true, maxConnections: 4, socketTimeout: 30_000 });
    try {
      const replies = await Promise.all(
        Array.from({ length: MESSAGES }, (_, i) => transport.sendMail({ envelope: { from: 's@example.org', to: inbox.email }, raw: longFromMessage(inbox.email, i) })),
      );
      for (const info of replies) expect(info.response).toMatch(/^250 /);
    } finally {
      transport.close();
    }
    console.log(`filter-cost: filled ${MESSAGES} messages in ${Math.round(performance.now() - started)} ms`);
  }, FILL_TIMEOUT_MS);
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
    data.cleanup();
  });

  it('answers filtered checks with 320-character near misses while /healthz and another sender stay fast', async () => {
    const path = `/api/check/${inbox.username}`;
    const one = await attacker.get(`${path}?from=${nearMiss('b')}&limit=1`);
    expect(one.status).toBe(200);
    expect(one.json.count).toBe(0);
    // The filters still find what they should, in the first characters of the long values.
    const hit = await attacker.get(`${path}?from=${'A'.repeat(FILTER_CHARS)}&subject=${'a'.repeat(FILTER_CHARS - 4)}%20999&limit=5`);
    expect(hit.json.count).toBe(1);

    await loopDelay(server);
    const probes = startProbes(server, bystanderInbox.email);
    const checkMs: number[] = [];
    const statuses = new Set<number>();
    const phaseStart = performance.now();
    for (let i = 0; performance.now() < phaseStart + CHECK_PHASE_MS; i += 1) {
      const started = performance.now();
      const query = i % 2 === 0 ? `from=${nearMiss(String.fromCharCode(98 + (i % 20)))}` : `subject=${nearMiss('z')}&from=${nearMiss('y')}`;
      const answer = await attacker.get(`${path}?${query}`);
      statuses.add(answer.status);
      checkMs.push(performance.now() - started);
      // The next check at its turn, or at once when this one took longer.
      await new Promise((done) => setTimeout(done, phaseStart + (i + 1) * CHECK_INTERVAL_MS - performance.now()));
    }
    const { healthMs, smtpMs, errors } = await probes.stop();
    const delay = await loopDelay(server);
    const report = {
      checks: checkMs.length,
      checkP50Ms: percentile(checkMs, 50),
      healthP50Ms: percentile(healthMs, 50),
      healthP90Ms: percentile(healthMs, 90),
      healthMaxMs: percentile(healthMs, 100),
      smtpP50Ms: percentile(smtpMs, 50),
      smtpP75Ms: percentile(smtpMs, 75),
      smtpP90Ms: percentile(smtpMs, 90),
      smtpMaxMs: percentile(smtpMs, 100),
      smtpTransactions: smtpMs.length,
      loopDelayMaxMs: delay.maxMs,
      loopDelayP99Ms: delay.p99Ms,
    };
    console.log(`filter-cost checks: ${JSON.stringify(report)}`);
    expect([...statuses]).toEqual([200]);
    expect(errors).toEqual([]);
    expect(smtpMs.length).toBeGreaterThan(10);
    expect(report.healthP90Ms).toBeLessThan(REQUEST_BOUND_MS);
    expect(report.smtpP75Ms).toBeLessThan(SMTP_BOUND_MS);
    expect(report.healthMaxMs).toBeLessThan(WORST_SAMPLE_MS);
    expect(report.smtpMaxMs).toBeLessThan(WORST_SAMPLE_MS);
    expect(report.loopDelayMaxMs).toBeLessThan(WORST_SAMPLE_MS);
  }, 60_000);

  it('holds ten waits with distinct near-miss filters while mail arrives, and nobody else waits', async () => {
    const path = `/api/check/${inbox.username}`;
    await loopDelay(server);
    const probes = startProbes(server, bystanderInbox.email);
    const waits = Array.from({ length: HELD_WAITS }, (_, i) =>
      // Distinct near misses of the stored From, each a suffix of the message that ends them;
      // without `since`, so that each wait has the whole inbox to look at.
      fetch(`${server.baseUrl}${path}?wait=30&from=${'a'.repeat(FILTER_CHARS - 1 - i)}b`, {
        headers: { cookie: `tempinbox_session=${attacker.cookie('tempinbox_session') ?? ''}` },
        signal: AbortSignal.timeout(60_000),
      }),
    );
    // Let the waits be held before mail comes.
    await new Promise((done) => setTimeout(done, 500));
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, ignoreTLS: true, pool: true, maxConnections: 1, socketTimeout: 30_000 });
    try {
      for (let i = 0; i < ARRIVING; i += 1) {
        const info = await transport.sendMail({ envelope: { from: 's@example.org', to: inbox.email }, raw: longFromMessage(inbox.email, MESSAGES + i) });
        expect(info.response).toMatch(/^250 /);
        await new Promise((done) => setTimeout(done, 250));
      }
    } finally {
      transport.close();
    }
    const { healthMs, smtpMs, errors } = await probes.stop();
    const delay = await loopDelay(server);
    // A message that matches every filter answers every wait at once.
    const matching = Buffer.from(`From: ${nearMiss('b')} <s@example.org>\r\nTo: ${inbox.email}\r\nSubject: match\r\n\r\nmatch\r\n`);
    const transportMatch = nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, ignoreTLS: true });
    await transportMatch.sendMail({ envelope: { from: 's@example.org', to: inbox.email }, raw: matching });
    transportMatch.close();
    const answers = await Promise.all(waits.map(async (answer) => ({ status: (await answer).status, json: (await (await answer).json()) as { count: number } })));
    const report = {
      healthP50Ms: percentile(healthMs, 50),
      healthP90Ms: percentile(healthMs, 90),
      healthMaxMs: percentile(healthMs, 100),
      smtpP50Ms: percentile(smtpMs, 50),
      smtpP75Ms: percentile(smtpMs, 75),
      smtpP90Ms: percentile(smtpMs, 90),
      smtpMaxMs: percentile(smtpMs, 100),
      smtpTransactions: smtpMs.length,
      loopDelayMaxMs: delay.maxMs,
      loopDelayP99Ms: delay.p99Ms,
      counts: answers.map((answer) => answer.json.count),
    };
    console.log(`filter-cost waits: ${JSON.stringify(report)}`);
    expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: HELD_WAITS }, () => 200));
    // None answered before the matching message, each answered it alone.
    expect(report.counts).toEqual(Array.from({ length: HELD_WAITS }, () => 1));
    expect(errors).toEqual([]);
    expect(report.healthP90Ms).toBeLessThan(REQUEST_BOUND_MS);
    expect(report.smtpP75Ms).toBeLessThan(SMTP_BOUND_MS);
    expect(report.healthMaxMs).toBeLessThan(WORST_SAMPLE_MS);
    expect(report.smtpMaxMs).toBeLessThan(WORST_SAMPLE_MS);
    expect(report.loopDelayMaxMs).toBeLessThan(WORST_SAMPLE_MS);
  }, 90_000);
});
