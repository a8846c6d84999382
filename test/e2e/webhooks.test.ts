import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhookSignature } from '../../src/domain/webhook-signature.js';
import { startLoopbackDnsServer, type AddressZone, type LoopbackDnsServer } from '../../support/loopback-dns-server.js';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';
import { startWebhookReceiver, type ReceivedRequest } from '../helpers/webhook-receiver.js';
import { premiumOwner, putJson, quantile, setWebhook, smtpSender, until } from '../helpers/webhook-e2e.js';

/**
 * Webhooks end to end (docs/api.md "Webhooks") on an app over a SQLite file, with real SMTP and
 * HTTP on loopback: receivers listen on 127.x addresses, names come from a DNS server on
 * loopback, and WEBHOOK_ALLOWED_NETWORKS opens only what each test needs. No URL set here
 * leaves 127.0.0.0/8 but the names resolved to public addresses, which are refused or never
 * connected to (the guard and rebinding tests assert it).
 */

/** The subject of a delivery's message. */
function subjectOf(request: ReceivedRequest): string {
  return (JSON.parse(request.body) as { message: { subject: string } }).message.subject;
}

/** A TCP listener that accepts and never answers: a dead receiver. Counts connections. */
async function startSilentListener(host: string): Promise<{ port: number; connections: () => number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : 0,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

async function licenseKey(app: TestApp['app'], sessions = 5): Promise<string> {
  const [key = ''] = await app.licenses.mint({ count: 1, days: 30, maxSessions: sessions });
  return key;
}

describe('webhooks end to end', () => {
  let dns: LoopbackDnsServer;
  const addresses: AddressZone = {
    'loop4.test': ['127.0.0.1'],
    'loop6.test': ['::1'],
    'ten.test': ['10.1.2.3'],
    'sixteen.test': ['172.16.0.1'],
    'home.test': ['192.168.1.1'],
    'metadata.test': ['169.254.169.254'],
    'cgnat.test': ['100.64.0.1'],
    'ula.test': ['fc00::1'],
    'mapped.test': ['::ffff:127.0.0.1'],
    'zero.test': ['0.0.0.0'],
    'rebind.test': ['93.184.216.34'],
  };
  beforeAll(async () => {
    dns = await startLoopbackDnsServer({}, { addresses });
  });
  afterAll(async () => {
    await dns.close();
  });

  it('posts one signed delivery per message, within a second of the 250 (latency measured)', async () => {
    const received: Array<{ request: ReceivedRequest; at: number }> = [];
    const receiver = await startWebhookReceiver((request, res) => {
      received.push({ request, at: Date.now() });
      res.end('ok');
    });
    const testApp = await buildTestApp({ store: 'sqlite', env: { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' } });
    const sender = smtpSender(testApp.smtpPort, 1);
    try {
      const owner = await premiumOwner(`http://127.0.0.1:${testApp.httpPort}`, await licenseKey(testApp.app));
      const secret = await setWebhook(owner, `http://127.0.0.1:${receiver.port}/hook`);
      const acknowledged = new Map<string, number>();
      const MESSAGES = 40;
      for (let i = 0; i < MESSAGES; i += 1) {
        const sent = await sender.send(owner.email, `latency-${i}`);
        expect(sent.response).toMatch(/^250/);
        acknowledged.set(`latency-${i}`, sent.at);
        await until(() => received.length, (n) => n > i, 5000, 2);
      }
      expect(received).toHaveLength(MESSAGES);
      const first = received[0]?.request;
      expect(await verifyWebhookSignature(secret, String(first?.headers['tempinbox-signature']), first?.body ?? '', 60)).toBe(true);
      expect(await verifyWebhookSignature('another-secret-000000', String(first?.headers['tempinbox-signature']), first?.body ?? '', 60)).toBe(false);
      expect(new Set(received.map((entry) => entry.request.headers['tempinbox-delivery'])).size).toBe(MESSAGES);
      const latencies = received.map((entry) => entry.at - (acknowledged.get(subjectOf(entry.request)) ?? Number.NaN));
      for (const latency of latencies) expect(latency).toBeLessThan(1000);
      console.log(`webhook latency 250 → POST, one node (SQLite), ${MESSAGES} messages: p50 ${quantile(latencies, 0.5)} ms, p99 ${quantile(latencies, 0.99)} ms, max ${Math.max(...latencies)} ms`);
    } finally {
      sender.close();
      await testApp.stop();
      await receiver.close();
    }
  });

  it('retries a receiver answering 500 twice: three attempts at the scheduled times, then delivered', async () => {
    const times: number[] = [];
    const receiver = await startWebhookReceiver((_request, res) => {
      times.push(Date.now());
      res.statusCode = times.length <= 2 ? 500 : 200;
      res.end();
    });
    const testApp = await buildTestApp({ store: 'sqlite', env: { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8', WEBHOOK_RETRY_BASE_SECONDS: '1' } });
    try {
      const owner = await premiumOwner(`http://127.0.0.1:${testApp.httpPort}`, await licenseKey(testApp.app));
      await setWebhook(owner, `http://127.0.0.1:${receiver.port}/hook`);
      const sender = smtpSender(testApp.smtpPort, 1);
      await sender.send(owner.email, 'retry me');
      sender.close();
      await until(() => times.length, (n) => n >= 3, 15_000);
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(times).toHaveLength(3);
      const gaps = [(times[1] ?? 0) - (times[0] ?? 0), (times[2] ?? 0) - (times[1] ?? 0)];
      // base × 1 s, then base × 6 s, each ± 10 %, counted from the end of the attempt before;
      // never early, and late by at most the worker's poll interval (1 s) on a loaded machine.
      expect(gaps[0]).toBeGreaterThanOrEqual(900);
      expect(gaps[0]).toBeLessThan(1100 + 1000);
      expect(gaps[1]).toBeGreaterThanOrEqual(5400);
      expect(gaps[1]).toBeLessThan(6600 + 1000);
      const listed = await owner.client.get(`/api/inbox/${owner.username}/webhook`);
      expect(listed.json.deliveries.map((d: { attempt: number; status: number }) => [d.attempt, d.status])).toEqual([[3, 200], [2, 500], [1, 500]]);
      const metrics = (await owner.client.get('/metrics')).text;
      expect(metrics).toMatch(/tempinbox_webhook_deliveries_total\{outcome="retried"\} 2/);
      expect(metrics).toMatch(/tempinbox_webhook_deliveries_total\{outcome="delivered"\} 1/);
      console.log(`webhook retries (base 1 s): gaps ${gaps.join(' ms, ')} ms`);
    } finally {
      await testApp.stop();
      await receiver.close();
    }
  });

  it('refuses non-public destinations at PUT, as literals and as names, and connects to none of them', async () => {
    // No WEBHOOK_ALLOWED_NETWORKS: loopback itself is forbidden here.
    const receiver = await startWebhookReceiver();
    const testApp = await buildTestApp({ store: 'sqlite', env: { DNS_SERVERS: dns.address } });
    try {
      const owner = await premiumOwner(`http://127.0.0.1:${testApp.httpPort}`, await licenseKey(testApp.app));
      const port = receiver.port;
      const literals = ['127.0.0.1', '[::1]', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '[fc00::1]', '[::ffff:127.0.0.1]', '0.0.0.0'];
      const names = ['loop4.test', 'loop6.test', 'ten.test', 'sixteen.test', 'home.test', 'metadata.test', 'cgnat.test', 'ula.test', 'mapped.test', 'zero.test'];
      for (const host of [...literals, ...names]) {
        const put = await putJson(owner.client, `/api/inbox/${owner.username}/webhook`, { url: `http://${host}:${port}/hook` });
        expect([put.status, put.json.error?.code], host).toEqual([400, 'webhook_url_forbidden']);
      }
      for (const name of names) expect(dns.queries, name).toContain(`A ${name}`);
      // Mail to the inbox owes nothing: no webhook was set.
      const sender = smtpSender(testApp.smtpPort, 1);
      await sender.send(owner.email, 'nobody is told');
      sender.close();
      await new Promise((resolve) => setTimeout(resolve, 500));
      const listed = await owner.client.get(`/api/inbox/${owner.username}/webhook`);
      expect(listed.json).toEqual({ success: true, webhook: null, deliveries: [] });
      expect(receiver.connections).toBe(0);
    } finally {
      await testApp.stop();
      await receiver.close();
    }
  });

  it('refuses at delivery a name that was public at PUT and now resolves to a forbidden address (rebinding)', async () => {
    // The receiver on 127.0.0.2 is where a rebinding attack would send the delivery; only
    // 127.0.0.1 is allowed, so the check at delivery must refuse 127.0.0.2.
    const trap = await startSilentListener('127.0.0.2');
    addresses['rebind.test'] = ['93.184.216.34'];
    const testApp = await buildTestApp({ store: 'sqlite', env: { DNS_SERVERS: dns.address, WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32', WEBHOOK_RETRY_BASE_SECONDS: '1' } });
    try {
      const owner = await premiumOwner(`http://127.0.0.1:${testApp.httpPort}`, await licenseKey(testApp.app));
      await setWebhook(owner, `http://rebind.test:${trap.port}/hook`);
      // Rebound before any delivery is owed: 93.184.216.34 is never connected to.
      addresses['rebind.test'] = ['127.0.0.2'];
      const sender = smtpSender(testApp.smtpPort, 1);
      await sender.send(owner.email, 'rebound');
      sender.close();
      const listed = await until(
        async () => (await owner.client.get(`/api/inbox/${owner.username}/webhook`)).json,
        (json) => json.deliveries.length > 0,
      );
      expect(listed.deliveries[0]).toMatchObject({ attempt: 1, status: null, error: expect.stringContaining('loopback') });
      expect(listed.deliveries[0].error).toContain('public addresses only');
      expect(trap.connections()).toBe(0);
    } finally {
      await testApp.stop();
      await trap.close();
      addresses['rebind.test'] = ['93.184.216.34'];
    }
  });

  it('a receiver that never answers delays neither the 250 nor a check (250 latency measured with and without it)', async () => {
    const dead = await startSilentListener('127.0.0.1');
    const testApp = await buildTestApp({ store: 'sqlite', env: { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8', WEBHOOK_CONCURRENCY: '4' } });
    const sender = smtpSender(testApp.smtpPort, 1);
    try {
      const key = await licenseKey(testApp.app);
      const hooked = await premiumOwner(`http://127.0.0.1:${testApp.httpPort}`, key);
      const plain = await premiumOwner(`http://127.0.0.1:${testApp.httpPort}`, key);
      await setWebhook(hooked, `http://127.0.0.1:${dead.port}/hook`);
      // One message first, unmeasured: a fresh process's first delivery pays its one-time
      // costs (the parse worker's first task, compilation), which would land on one side.
      await sender.send(plain.email, 'warm-up');
      const ROUNDS = 30;
      const withDead: number[] = [];
      const without: number[] = [];
      const checks: number[] = [];
      // Interleaved, so both see the same machine load.
      for (let i = 0; i < ROUNDS; i += 1) {
        withDead.push((await sender.send(hooked.email, `dead-${i}`)).ms);
        without.push((await sender.send(plain.email, `plain-${i}`)).ms);
        const started = performance.now();
        const check = await hooked.client.get(`/api/check/${hooked.username}`);
        checks.push(performance.now() - started);
        expect(check.status).toBe(200);
      }
      // The dead receiver holds every slot (4) for 10 s: the 250s went on regardless.
      expect(testApp.app.webhookWorker.active).toBe(4);
      expect(dead.connections()).toBeGreaterThanOrEqual(4);
      const p50Dead = quantile(withDead, 0.5);
      const p50Plain = quantile(without, 0.5);
      // A 250 that waited for the dead receiver would take its whole 10 s deadline; on a loaded
      // machine either kind of send can take a second or two, so the bound is the deadline's.
      expect(Math.max(...withDead)).toBeLessThan(8000);
      expect(Math.max(...checks)).toBeLessThan(8000);
      expect(p50Dead).toBeLessThan(p50Plain * 3 + 50);
      console.log(
        `250 latency (send to 250, ms) over ${ROUNDS} messages each: dead receiver p50 ${p50Dead.toFixed(1)} p99 ${quantile(withDead, 0.99).toFixed(1)}; ` +
          `no webhook p50 ${p50Plain.toFixed(1)} p99 ${quantile(without, 0.99).toFixed(1)}; check during it p50 ${quantile(checks, 0.5).toFixed(1)} p99 ${quantile(checks, 0.99).toFixed(1)}`,
      );
    } finally {
      sender.close();
      await testApp.stop();
      await dead.close();
    }
  });

  it('1,000 messages to 50 inboxes with a slow receiver: never more than WEBHOOK_CONCURRENCY in flight, every one delivered', { timeout: 120_000 }, async () => {
    const CONCURRENCY = 8;
    let open = 0;
    let mostOpen = 0;
    const ids = new Set<string>();
    let requests = 0;
    const receiver = await startWebhookReceiver((request, res) => {
      open += 1;
      mostOpen = Math.max(mostOpen, open);
      requests += 1;
      ids.add(String(request.headers['tempinbox-delivery']));
      setTimeout(() => {
        open -= 1;
        res.end('ok');
      }, 40);
    });
    const testApp = await buildTestApp({ store: 'sqlite', env: { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8', WEBHOOK_CONCURRENCY: String(CONCURRENCY) } });
    const sender = smtpSender(testApp.smtpPort, 8);
    try {
      const key = await licenseKey(testApp.app, 60);
      const owners = [];
      for (let i = 0; i < 50; i += 1) owners.push(await premiumOwner(`http://127.0.0.1:${testApp.httpPort}`, key));
      for (const owner of owners) await setWebhook(owner, `http://127.0.0.1:${receiver.port}/hook`);
      let mostActive = 0;
      const sampler = setInterval(() => (mostActive = Math.max(mostActive, testApp.app.webhookWorker.active)), 5);
      const started = Date.now();
      const sends: Promise<unknown>[] = [];
      for (let i = 0; i < 1000; i += 1) sends.push(sender.send(owners[i % 50]?.email ?? '', `bulk-${i}`));
      await Promise.all(sends);
      const sentIn = Date.now() - started;
      await until(() => ids.size, (n) => n >= 1000, 90_000, 100);
      clearInterval(sampler);
      expect(ids.size).toBe(1000);
      expect(requests).toBe(1000);
      expect(mostOpen).toBeLessThanOrEqual(CONCURRENCY);
      expect(mostActive).toBeLessThanOrEqual(CONCURRENCY);
      expect(mostOpen).toBe(CONCURRENCY);
      console.log(`1,000 messages to 50 inboxes: sent in ${sentIn} ms, all delivered in ${Date.now() - started} ms, most in flight ${mostOpen} (limit ${CONCURRENCY})`);
    } finally {
      sender.close();
      await testApp.stop();
      await receiver.close();
    }
  });
});
