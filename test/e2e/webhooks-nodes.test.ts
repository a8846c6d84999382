import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieClient } from '../helpers/cookie-client.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/postgres-test-database.js';
import { runBin, startServer, tempDataDir, type ServerProcess } from '../helpers/server-process.js';
import { startWebhookReceiver, type ReceivedRequest } from '../helpers/webhook-receiver.js';
import { premiumOwner, quantile, setWebhook, smtpSender, until } from '../helpers/webhook-e2e.js';

/**
 * Webhooks across the program's own processes (dist/main.js, as users start it): deliveries
 * owed when a node is killed with SIGKILL are made after its restart, and several nodes on one
 * PostgreSQL deliver each message exactly once between them. Receivers listen on 127.0.0.1,
 * which WEBHOOK_ALLOWED_NETWORKS opens.
 */

const WEBHOOK_ENV = { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8', WEBHOOK_RETRY_BASE_SECONDS: '1', RATE_LIMITS: 'off' };

/** The message id of a delivery's body. */
function messageIdOf(request: ReceivedRequest): string {
  return (JSON.parse(request.body) as { message: { id: string } }).message.id;
}

/** The `tempinbox_webhook_deliveries_total{outcome="delivered"}` of a node. */
async function deliveredBy(node: ServerProcess): Promise<number> {
  const text = await (await fetch(`${node.baseUrl}/metrics`, { signal: AbortSignal.timeout(10_000) })).text();
  const match = /tempinbox_webhook_deliveries_total\{outcome="delivered"\} (\d+)/.exec(text);
  return match === null ? 0 : Number(match[1]);
}

describe('webhook deliveries survive kill -9', () => {
  const data = tempDataDir();
  let server: ServerProcess | undefined;
  afterAll(async () => {
    await server?.kill9();
    data.cleanup();
  });

  it('delivers after a restart every delivery owed when the node was killed', { timeout: 120_000 }, async () => {
    // Failing first (503), so that deliveries are owed, retried and in flight at the kill.
    let answer = 503;
    const delivered = new Set<string>();
    const receiver = await startWebhookReceiver((request, res) => {
      res.statusCode = answer;
      if (answer === 200) delivered.add(messageIdOf(request));
      res.end();
    });
    try {
      const env = { ...WEBHOOK_ENV, DATABASE_URL: data.databaseUrl };
      server = await startServer(env);
      const minted = await runBin(['license', 'create'], { DATABASE_URL: data.databaseUrl, LOG_LEVEL: 'warn' });
      expect(minted.code).toBe(0);
      const owner = await premiumOwner(server.baseUrl, minted.stdout.trim());
      const secret = await setWebhook(owner, `http://127.0.0.1:${receiver.port}/hook?token=url-token-0123`);
      const sender = smtpSender(server.smtpPort, 2);
      const MESSAGES = 20;
      await Promise.all(Array.from({ length: MESSAGES }, (_, i) => sender.send(owner.email, `owed-${i}`)));
      sender.close();
      await until(() => receiver.requests.length, (n) => n >= MESSAGES, 10_000);
      await server.kill9();
      // The retries were logged (LOG_LEVEL info): never with the secret, the URL or the message.
      const logged = server.stdout() + server.stderr();
      expect(logged).toContain('webhook attempt failed');
      for (const secretText of [secret, 'url-token-0123', 'owed-', 'body of']) expect(logged).not.toContain(secretText);
      const failedBefore = receiver.requests.length;
      answer = 200;
      server = await startServer(env);
      const restarted = Date.now();
      // At most one lease (30 s) for a delivery that was in flight at the kill, plus a retry's wait.
      await until(() => delivered.size, (n) => n >= MESSAGES, 60_000, 100);
      const after = new CookieClient(server.baseUrl);
      after.setCookie('tempinbox_session', owner.client.cookie('tempinbox_session'));
      const listed = await after.get(`/api/check/${owner.username}`);
      const stored = new Set<string>(listed.json.emails.map((m: { id: string }) => m.id));
      expect(stored.size).toBe(MESSAGES);
      expect([...delivered].sort()).toEqual([...stored].sort());
      console.log(`kill -9 with ${MESSAGES} deliveries owed: ${failedBefore} failed attempts before the kill, all ${delivered.size} delivered ${Date.now() - restarted} ms after the restart`);
    } finally {
      await receiver.close();
    }
  });
});

describe('webhook attempts in flight at SIGTERM', () => {
  const data = tempDataDir();
  let server: ServerProcess | undefined;
  afterAll(async () => {
    await server?.kill9();
    data.cleanup();
  });

  it('stops within its drain bound with an attempt held by the receiver, which stays owed and is delivered after the restart', { timeout: 120_000 }, async () => {
    let hold = true;
    const delivered: string[] = [];
    const receiver = await startWebhookReceiver((request, res) => {
      // Holding: the request is read and never answered, as a hung receiver does.
      if (hold) return;
      delivered.push(String(request.headers['tempinbox-delivery']));
      res.end('ok');
    });
    try {
      const env = { ...WEBHOOK_ENV, DATABASE_URL: data.databaseUrl };
      server = await startServer(env);
      const minted = await runBin(['license', 'create'], { DATABASE_URL: data.databaseUrl, LOG_LEVEL: 'warn' });
      const owner = await premiumOwner(server.baseUrl, minted.stdout.trim());
      await setWebhook(owner, `http://127.0.0.1:${receiver.port}/hook`);
      const sender = smtpSender(server.smtpPort, 1);
      await sender.send(owner.email, 'held at shutdown');
      sender.close();
      await until(() => receiver.requests.length, (n) => n >= 1, 10_000);
      const held = String(receiver.requests[0]?.headers['tempinbox-delivery']);
      const stopping = Date.now();
      expect(await server.stop()).toBe(0);
      const stopMs = Date.now() - stopping;
      // The worker's drain (3 s) bounds the wait; the 10 s attempt deadline does not.
      expect(stopMs).toBeLessThan(8000);
      hold = false;
      server = await startServer(env);
      const restarted = Date.now();
      // The abandoned attempt was never recorded, and its claim was given back at the stop:
      // due at once after the restart, not when its lease (30 s) runs out.
      await until(() => delivered.length, (n) => n >= 1, 10_000, 100);
      expect(delivered).toEqual([held]);
      console.log(`SIGTERM with an attempt in flight: exited 0 in ${stopMs} ms; the delivery stayed owed, delivered ${Date.now() - restarted} ms after the restart`);
    } finally {
      await receiver.close();
    }
  });
});

const available = await postgresAvailable('webhooks on several nodes');

describe.skipIf(!available)('webhooks on several nodes sharing one PostgreSQL', () => {
  let database: TestDatabase | undefined;
  const nodes: ServerProcess[] = [];
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await Promise.all(nodes.map((node) => node.stop()));
    await database?.drop();
  });

  it('delivers each of 200 messages exactly once, shared between the nodes', { timeout: 180_000 }, async () => {
    const NODES = 3;
    const MESSAGES = 200;
    const received = new Map<string, number>();
    const arrivals = new Map<string, number>();
    let requests = 0;
    const receiver = await startWebhookReceiver((request, res) => {
      requests += 1;
      const id = String(request.headers['tempinbox-delivery']);
      received.set(id, (received.get(id) ?? 0) + 1);
      arrivals.set((JSON.parse(request.body) as { message: { subject: string } }).message.subject, Date.now());
      // Slow enough that deliveries queue, so nodes other than the receiving one claim some.
      setTimeout(() => res.end('ok'), 20);
    });
    try {
      const env = { ...WEBHOOK_ENV, DATABASE_URL: database?.url ?? '', WEBHOOK_CONCURRENCY: '2' };
      nodes.push(await startServer(env));
      for (let i = 1; i < NODES; i += 1) nodes.push(await startServer(env));
      const minted = await runBin(['license', 'create', '--max-sessions', '10'], { DATABASE_URL: database?.url ?? '', LOG_LEVEL: 'warn' });
      expect(minted.code).toBe(0);
      const first = nodes[0] as ServerProcess;
      const owners: Array<Awaited<ReturnType<typeof premiumOwner>>> = [];
      for (let i = 0; i < 4; i += 1) owners.push(await premiumOwner(first.baseUrl, minted.stdout.trim()));
      for (const owner of owners) await setWebhook(owner, `http://127.0.0.1:${receiver.port}/hook`);
      // Each node receives a share of the mail over SMTP.
      const senders = nodes.map((node) => smtpSender(node.smtpPort, 2));
      // First one at a time (latency with nothing queued), then the rest at once.
      const SEQUENTIAL = 30;
      const acknowledged = new Map<string, number>();
      for (let i = 0; i < SEQUENTIAL; i += 1) {
        const sent = await senders[i % NODES]?.send(owners[i % owners.length]?.email ?? '', `one-${i}`);
        acknowledged.set(`one-${i}`, sent?.at ?? Number.NaN);
        await until(() => arrivals.has(`one-${i}`), (done) => done, 10_000, 2);
      }
      const quiet = [...acknowledged].map(([subject, at]) => (arrivals.get(subject) ?? Number.NaN) - at);
      await Promise.all(
        Array.from({ length: MESSAGES - SEQUENTIAL }, async (_, i) => {
          const subject = `shared-${i}`;
          const sent = await senders[i % NODES]?.send(owners[i % owners.length]?.email ?? '', subject);
          acknowledged.set(subject, sent?.at ?? Number.NaN);
        }),
      );
      for (const sender of senders) sender.close();
      await until(() => received.size, (n) => n >= MESSAGES, 120_000, 100);
      // Time for a duplicate to show, should any node deliver one again.
      await new Promise((resolve) => setTimeout(resolve, 2000));
      expect(received.size).toBe(MESSAGES);
      expect(requests).toBe(MESSAGES);
      expect([...received.values()].every((count) => count === 1)).toBe(true);
      const perNode = await Promise.all(nodes.map((node) => deliveredBy(node)));
      expect(perNode.reduce((a, b) => a + b, 0)).toBe(MESSAGES);
      for (const count of perNode) expect(count).toBeGreaterThan(0);
      const burst = [...arrivals].filter(([subject]) => subject.startsWith('shared-')).map(([subject, at]) => at - (acknowledged.get(subject) ?? Number.NaN));
      console.log(
        `${NODES} nodes on PostgreSQL, ${MESSAGES} messages: delivered once each, per node ${perNode.join('/')}; latency 250 → POST ` +
          `one at a time p50 ${quantile(quiet, 0.5)} ms p99 ${quantile(quiet, 0.99)} ms; ${MESSAGES - SEQUENTIAL} at once p50 ${quantile(burst, 0.5)} ms p99 ${quantile(burst, 0.99)} ms ` +
          '(receiver answers in 20 ms, WEBHOOK_CONCURRENCY 2 per node)',
      );
    } finally {
      await receiver.close();
    }
  });
});
