import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieClient } from '../helpers/cookie-client.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/postgres-test-database.js';
import { sendRawSmtp } from '../helpers/send-raw-smtp.js';
import { runBin, startServer, type ServerProcess } from '../helpers/server-process.js';
import { SseClient } from '../helpers/sse-client.js';

const available = await postgresAvailable('live mail across nodes');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Sends one small message over SMTP to `server`; resolves with the reply to DATA. */
function send(server: ServerProcess, to: string, subject: string): Promise<string> {
  const raw = new TextEncoder().encode(`From: sender@example.org\r\nTo: ${to}\r\nSubject: ${subject}\r\n\r\nbody\r\n`);
  return sendRawSmtp(server.smtpPort, 'sender@example.org', to, raw);
}

/**
 * Two nodes on one PostgreSQL (docs/scaling.md "Live mail"): a client waits and streams on
 * node A while mail is taken in by node B; the events cross by LISTEN/NOTIFY, and a killed
 * LISTEN connection loses nothing.
 */
describe.skipIf(!available)('live mail across two nodes on PostgreSQL', () => {
  let database: TestDatabase | undefined;
  let a: ServerProcess | undefined;
  let b: ServerProcess | undefined;
  const nodes = () => {
    if (a === undefined || b === undefined) throw new Error('nodes did not start');
    return { a, b };
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    const env = { DATABASE_URL: database.url, RATE_LIMITS: 'off', DATABASE_POOL_SIZE: '4' };
    a = await startServer(env, 30_000);
    b = await startServer(env, 30_000);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await database?.drop();
  });

  it('a wait on node A is answered within 1 s of the 250 on node B', async () => {
    const { a, b } = nodes();
    const client = new CookieClient(a.baseUrl);
    const username = (await client.get('/api/create')).json.username as string;
    const waiting = client.get(`/api/check/${username}?wait=20`);
    await sleep(300);
    expect(await send(b, `${username}@tempinbox.test`, 'cross-node')).toMatch(/^250/);
    const acked = Date.now();
    const answer = await waiting;
    expect(Date.now() - acked).toBeLessThan(1000);
    expect(answer.json.emails.map((m: { subject: string }) => m.subject)).toEqual(['cross-node']);
  });

  it('a stream on node A gets every message taken in by node B, also while its LISTEN connection is killed', async () => {
    const { a, b } = nodes();
    const client = new CookieClient(a.baseUrl);
    const username = (await client.get('/api/create')).json.username as string;
    const stream = await SseClient.open(`${a.baseUrl}/api/inbox/${username}/events`, { cookie: `tempinbox_session=${client.cookie('tempinbox_session') ?? ''}` });
    const admin = new pg.Pool({ connectionString: database?.url, max: 1 });
    try {
      expect(stream.status).toBe(200);
      expect(await send(b, `${username}@tempinbox.test`, 'before')).toMatch(/^250/);
      await stream.until((events) => events.some((e) => e.event === 'message'), 5000);

      // Kill the LISTEN connections again and again while B takes mail in: NOTIFYs sent
      // while A is not listening are lost, and A must catch up from the database.
      const sent = ['before'];
      let killing = true;
      let kills = 0;
      const killer = (async () => {
        while (killing) {
          const result = await admin.query(
            "select pg_terminate_backend(pid) as ok from pg_stat_activity where application_name = 'tempinbox-listen' and datname = current_database()",
          );
          kills += result.rowCount ?? 0;
          await sleep(30);
        }
      })();
      for (let i = 0; i < 12; i += 1) {
        expect(await send(b, `${username}@tempinbox.test`, `during ${i}`)).toMatch(/^250/);
        sent.push(`during ${i}`);
      }
      killing = false;
      await killer;
      expect(kills).toBeGreaterThan(0);
      // Nothing more is sent: only A's catch-up after reconnecting can bring the rest.
      await stream.until((events) => events.filter((e) => e.event === 'message').length >= sent.length, 15_000);
      await sleep(300);
      const subjects = stream.events.filter((e) => e.event === 'message').map((e) => (JSON.parse(e.data) as { subject: string }).subject);
      expect(subjects).toEqual(sent);
    } finally {
      stream.close();
      await admin.end();
    }
  }, 60_000);

  it('a stream on node A ends, and a wait there answers 404, once their session redeemed another license on node B, before the next message', async () => {
    const { a, b } = nodes();
    const minted = await runBin(['license', 'create', '--count', '2', '--max-sessions', '5'], { DATABASE_URL: database?.url ?? '', LOG_LEVEL: 'warn' });
    expect(minted.code).toBe(0);
    const [first, second] = minted.stdout.trim().split('\n');
    // Session 1 creates an inbox of license 1 on A; session 2 reads it through the license.
    const owner = new CookieClient(a.baseUrl);
    expect((await owner.postJson('/api/premium/redeem', { key: first })).status).toBe(200);
    const username = (await owner.get('/api/create')).json.username as string;
    const reader = new CookieClient(a.baseUrl);
    expect((await reader.postJson('/api/premium/redeem', { key: first })).status).toBe(200);
    const cookie = `tempinbox_session=${reader.cookie('tempinbox_session') ?? ''}`;
    const stream = await SseClient.open(`${a.baseUrl}/api/inbox/${username}/events`, { cookie });
    try {
      expect(stream.status).toBe(200);
      const waiting = reader.get(`/api/check/${username}?wait=8`);
      await sleep(300);
      // The same session switches license through node B: node A hears no event about it.
      const onB = new CookieClient(b.baseUrl);
      onB.setCookie('tempinbox_session', reader.cookie('tempinbox_session'));
      expect((await onB.postJson('/api/premium/redeem', { key: second })).status).toBe(200);
      expect(await send(b, `${username}@tempinbox.test`, 'after the switch')).toMatch(/^250/);
      const answer = await waiting;
      expect(answer.status).toBe(404);
      await Promise.race([stream.ended, sleep(5000)]);
      expect(stream.events.filter((e) => e.event === 'message')).toEqual([]);
      expect(await Promise.race([stream.ended.then(() => 'ended'), sleep(0).then(() => 'open')])).toBe('ended');
    } finally {
      stream.close();
    }
  }, 60_000);
});
