import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieClient, type ClientResponse } from '../helpers/cookie-client.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/postgres-test-database.js';
import { runBin, startServer, type ServerProcess } from '../helpers/server-process.js';

const available = await postgresAvailable('paid limits across several nodes');

/** Nodes sharing the database, as behind a load balancer. */
const NODES = 3;
/** Concurrent premium creates: well past the license's 10 inboxes. */
const PREMIUM_CREATES = 25;
/** The license's inbox maximum (PREMIUM_MAX_INBOXES default). */
const MAX_INBOXES = 10;
/** Concurrent redeems of one key, each from its own new session. */
const REDEEMS = 30;
/** The key's max_sessions. */
const MAX_SESSIONS = 5;
/** Concurrent creates in one free session. */
const FREE_CREATES = 20;

/**
 * Paid limits hold under concurrency, over HTTP: the requests of one client land
 * on different nodes at the same instant, and still no limit is exceeded, because each is
 * decided by one transaction in the shared database (docs/api.md "Fair use and limits").
 */
describe.skipIf(!available)('paid limits hold with concurrent requests on several nodes', () => {
  let database: TestDatabase | undefined;
  let nodes: ServerProcess[] = [];
  const nodeUrl = (i: number): string => nodes[i % nodes.length]?.baseUrl ?? '';
  const url = (): string => database?.url ?? '';

  beforeAll(async () => {
    database = await createTestDatabase();
    // Fair-use budgets off: they would refuse part of the burst and hide the limit under test.
    const env = { DATABASE_URL: url(), RATE_LIMITS: 'off', DATABASE_POOL_SIZE: '8' };
    const started = await Promise.allSettled(Array.from({ length: NODES }, () => startServer(env, 30_000)));
    nodes = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const failure = started.find((result) => result.status === 'rejected');
    if (failure !== undefined) throw failure.reason;
  }, 60_000);

  afterAll(async () => {
    await Promise.all(nodes.map((server) => server.kill9()));
    await database?.drop();
  });

  /** A client on node `i` sharing `cookie`. */
  const clientOn = (i: number, cookie: string | undefined): CookieClient => {
    const client = new CookieClient(nodeUrl(i));
    client.setCookie('tempinbox_session', cookie);
    return client;
  };

  const mintKey = async (maxSessions: number): Promise<string> => {
    const minted = await runBin(['license', 'create', '--max-sessions', String(maxSessions)], { DATABASE_URL: url() });
    expect(minted.code).toBe(0);
    return minted.stdout.trim();
  };

  const statuses = (responses: ClientResponse[]): Record<number, number> => {
    const counts: Record<number, number> = {};
    for (const response of responses) counts[response.status] = (counts[response.status] ?? 0) + 1;
    return counts;
  };

  it(`${PREMIUM_CREATES} concurrent premium creates over ${NODES} nodes make exactly ${MAX_INBOXES} inboxes`, async () => {
    const owner = new CookieClient(nodeUrl(0));
    expect((await owner.postJson('/api/premium/redeem', { key: await mintKey(5) })).status).toBe(200);
    const cookie = owner.cookie('tempinbox_session');

    const responses = await Promise.all(Array.from({ length: PREMIUM_CREATES }, (_, i) => clientOn(i, cookie).get('/api/create')));
    expect(statuses(responses)).toEqual({ 200: MAX_INBOXES, 403: PREMIUM_CREATES - MAX_INBOXES });
    for (const refused of responses.filter((r) => r.status === 403)) expect(refused.json.error.code).toBe('inbox_limit_reached');
    const session = await clientOn(1, cookie).get('/api/session');
    expect(session.json.inboxes).toHaveLength(MAX_INBOXES);
  });

  it(`${REDEEMS} concurrent redeems of a ${MAX_SESSIONS}-session key over ${NODES} nodes: exactly ${MAX_SESSIONS} succeed`, async () => {
    const key = await mintKey(MAX_SESSIONS);
    const responses = await Promise.all(
      Array.from({ length: REDEEMS }, (_, i) => new CookieClient(nodeUrl(i)).postJson('/api/premium/redeem', { key })),
    );
    expect(statuses(responses)).toEqual({ 200: MAX_SESSIONS, 409: REDEEMS - MAX_SESSIONS });
    for (const refused of responses.filter((r) => r.status === 409)) expect(refused.json.error.code).toBe('license_session_limit');
    const listed = await runBin(['license', 'list'], { DATABASE_URL: url() });
    expect(listed.stdout).toMatch(new RegExp(`\\b${MAX_SESSIONS}\\b`));
  });

  it(`${FREE_CREATES} concurrent creates in one free session over ${NODES} nodes all answer the same inbox`, async () => {
    // A session without an active inbox: its first inbox made, then discarded.
    const first = new CookieClient(nodeUrl(0));
    const made = await first.get('/api/create');
    expect((await first.delete(`/api/inbox/${made.json.username}`)).status).toBe(200);
    const cookie = first.cookie('tempinbox_session');

    const responses = await Promise.all(Array.from({ length: FREE_CREATES }, (_, i) => clientOn(i, cookie).get('/api/create')));
    expect(responses.map((r) => r.status)).toEqual(responses.map(() => 200));
    const emails = new Set(responses.map((r) => r.json.email as string));
    expect(emails.size).toBe(1);
    expect((await clientOn(2, cookie).get('/api/session')).json.inboxes).toHaveLength(1);
  });
});
