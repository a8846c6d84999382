import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECK_PER_SESSION } from '../../src/domain/fair-use.js';
import { checkAll, CookieClient } from '../helpers/cookie-client.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/postgres-test-database.js';
import { sendWithNodemailer } from '../helpers/send-mail.js';
import { runBin, startServer, type ServerProcess } from '../helpers/server-process.js';
import { startSmtpLoad } from '../helpers/smtp-load.js';

const available = await postgresAvailable('several nodes on one database');

/** SMTP senders in parallel against the node that gets killed. */
const CONNECTIONS = 6;
/** Upper bound of messages one sender tries before the kill stops it. */
const MAX_PER_SENDER = 400;
/** Acknowledged messages to wait for before the kill. */
const ACKS_BEFORE_KILL = 100;

/**
 * Contract §5: three copies of the program on different ports share one PostgreSQL database,
 * as nodes behind a load balancer and MX records would. Any node answers any request, limits
 * are not multiplied by the node count, and losing a node loses nothing it acknowledged.
 */
describe.skipIf(!available)('three nodes on one PostgreSQL', () => {
  let database: TestDatabase | undefined;
  let nodes: ServerProcess[] = [];
  const node = (index: number): ServerProcess => {
    const found = nodes[index];
    if (found === undefined) throw new Error(`node ${index} did not start`);
    return found;
  };
  const env = (): Record<string, string> => ({
    DATABASE_URL: database?.url ?? '',
    RATE_LIMITS: 'on',
    FREE_MAX_MESSAGES: '100000',
    DATABASE_POOL_SIZE: '4',
  });

  beforeAll(async () => {
    database = await createTestDatabase();
    // All three at once on an empty database: the migrations at start must not collide.
    const started = await Promise.allSettled([0, 1, 2].map(() => startServer(env(), 30_000)));
    nodes = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const failure = started.find((result) => result.status === 'rejected');
    if (failure !== undefined) throw failure.reason;
  }, 60_000);

  afterAll(async () => {
    await Promise.all(nodes.map((server) => server.kill9()));
    await database?.drop();
  });

  it('an inbox made on A receives SMTP on B and is read on A and C', async () => {
    const [a, b, c] = [node(0), node(1), node(2)];
    const onA = new CookieClient(a.baseUrl);
    const { json: inbox } = await onA.get('/api/create');
    expect(await sendWithNodemailer(b.smtpPort, { to: inbox.email, subject: 'via B', text: 'hello from B' })).toMatch(/^250 /);
    const check = await onA.get(`/api/check/${inbox.username}`);
    expect(check.status).toBe(200);
    expect(check.json.emails.map((m: { subject: string }) => m.subject)).toEqual(['via B']);
    // The same cookie works on C: sessions live in the database, not in a node.
    const onC = new CookieClient(c.baseUrl);
    onC.setCookie('tempinbox_session', onA.cookie('tempinbox_session'));
    const fromC = await onC.get(`/api/check/${inbox.username}`);
    expect(fromC.json.emails[0]?.id).toBe(check.json.emails[0]?.id);
    const raw = await onC.get(`/api/messages/${check.json.emails[0]?.id}/raw`);
    expect(raw.text).toContain('hello from B');
  });

  it('a license minted with the CLI and redeemed on B gives a custom username on A, seen from C', async () => {
    const [a, b, c] = [node(0), node(1), node(2)];
    const minted = await runBin(['license', 'create', '--count', '2'], { DATABASE_URL: database?.url ?? '' });
    expect(minted.code).toBe(0);
    const [key, otherKey] = minted.stdout.trim().split('\n');
    const onB = new CookieClient(b.baseUrl);
    const redeemed = await onB.postJson('/api/premium/redeem', { key });
    expect(redeemed.status).toBe(200);
    expect(redeemed.json.premium).toBe(true);

    const onA = new CookieClient(a.baseUrl);
    onA.setCookie('tempinbox_session', onB.cookie('tempinbox_session'));
    const name = `multi.node-${Date.now().toString(36)}`;
    const custom = await onA.get(`/api/create?username=${name}`);
    expect(custom.status).toBe(200);
    expect(custom.json.username).toBe(name);
    // A second device of the same license sees the inbox from C.
    const device = new CookieClient(c.baseUrl);
    expect((await device.postJson('/api/premium/redeem', { key })).status).toBe(200);
    const session = await device.get('/api/session');
    expect(session.json.inboxes.map((i: { username: string }) => i.username)).toContain(name);
    // The name is held across the cluster: another license asking for it on C gets 409.
    const other = new CookieClient(c.baseUrl);
    expect((await other.postJson('/api/premium/redeem', { key: otherKey })).status).toBe(200);
    const clash = await other.get(`/api/create?username=${name}`);
    expect(clash.status).toBe(409);
    expect(clash.json.error.code).toBe('username_taken');
  });

  it('a rate limit reached through several nodes is the one budget, not one per node', async () => {
    const onA = new CookieClient(node(0).baseUrl);
    const { json: inbox } = await onA.get('/api/create');
    const cookie = onA.cookie('tempinbox_session');
    const clients = nodes.map((server) => {
      const client = new CookieClient(server.baseUrl);
      client.setCookie('tempinbox_session', cookie);
      return client;
    });
    let granted = 0;
    let refusedBy: number | undefined;
    // Round-robin over the nodes, as a load balancer would; bounded well above one budget.
    for (let i = 0; i < CHECK_PER_SESSION.points * 2 && refusedBy === undefined; i += 1) {
      const response = await (clients[i % clients.length] as CookieClient).get(`/api/check/${inbox.username}`);
      if (response.status === 200) granted += 1;
      else {
        expect(response.status).toBe(429);
        expect(response.json.error.code).toBe('rate_limited');
        expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        refusedBy = i % clients.length;
      }
    }
    expect(granted).toBe(CHECK_PER_SESSION.points);
    // Every node now refuses this session.
    for (const client of clients) expect((await client.get(`/api/check/${inbox.username}`)).status).toBe(429);
  });

  it('kill -9 of one node under SMTP load: every message it answered 250 is readable on the others, which keep serving', async () => {
    const [a, b, c] = [node(0), node(1), node(2)];
    const onA = new CookieClient(a.baseUrl);
    const { json: inbox } = await onA.get('/api/create');

    const load = startSmtpLoad({ port: b.smtpPort, to: inbox.email, connections: CONNECTIONS, maxPerSender: MAX_PER_SENDER });
    await load.waitForAcks(ACKS_BEFORE_KILL, 20_000);
    await b.kill9();
    const { acknowledged, attempts } = await load.finish();
    expect(acknowledged.size).toBeGreaterThanOrEqual(ACKS_BEFORE_KILL);

    const stored = new Set<string>((await checkAll(onA, inbox.username)).map((m) => m.subject));
    expect([...acknowledged].filter((subject) => !stored.has(subject))).toEqual([]);
    expect(stored.size).toBeLessThanOrEqual(attempts);

    // The survivors keep serving: SMTP on C, HTTP on A and C.
    expect(await sendWithNodemailer(c.smtpPort, { to: inbox.email, subject: 'after the kill', text: 'still here' })).toMatch(/^250 /);
    const onC = new CookieClient(c.baseUrl);
    onC.setCookie('tempinbox_session', onA.cookie('tempinbox_session'));
    const fromC = await onC.get(`/api/check/${inbox.username}`);
    expect(fromC.status).toBe(200);
    expect(fromC.json.emails[0]?.subject).toBe('after the kill');
    expect((await new CookieClient(a.baseUrl).get('/api/create')).status).toBe(200);
    expect((await fetch(`${c.baseUrl}/readyz`)).status).toBe(200);
    console.log(`multi-node kill -9: ${acknowledged.size} acknowledged by B, ${stored.size} readable on A, ${attempts} attempted`);
  });
});
