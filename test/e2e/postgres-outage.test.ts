import nodemailer from 'nodemailer';
import { afterAll, describe, expect, it } from 'vitest';
import { CookieClient } from '../helpers/cookie-client.js';
import { createTestDatabase, postgresAvailable, POSTGRES_TEST_URL, urlForDatabase, type TestDatabase } from '../helpers/postgres-test-database.js';
import { startServer, type ServerProcess } from '../helpers/server-process.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

const available = await postgresAvailable('database outage');

/** How long an answer may take while the database is cut: fail fast, never hang. */
const FAST_FAILURE_MS = 7000;
/** How long the server may take to notice the database is back. */
const RECOVERY_MS = 20_000;

/** Polls `check` every 200 ms until it holds, at most `ms`. */
async function eventually(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return true;
    await new Promise((done) => setTimeout(done, 200));
  }
  return false;
}

/**
 * Contract §2/§3 on PostgreSQL: with the database unreachable, HTTP answers 503 unavailable,
 * SMTP 451, /readyz fails, the process stays up, and it recovers by itself when the database
 * returns, without losing anything it acknowledged. The outage is a TCP proxy between this one
 * server and the shared PostgreSQL being cut (other tests keep using the real server).
 */
describe.skipIf(!available)('PostgreSQL outage', () => {
  let database: TestDatabase | undefined;
  let proxy: TcpProxy | undefined;
  let server: ServerProcess | undefined;

  afterAll(async () => {
    await server?.kill9();
    await proxy?.close();
    await database?.drop();
  });

  it('answers 503 and 451 while the database is cut, stays up, recovers by itself, and loses nothing acknowledged', async () => {
    database = await createTestDatabase();
    const target = new URL(POSTGRES_TEST_URL);
    proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
    const viaProxy = new URL(urlForDatabase(database.name));
    viaProxy.host = `127.0.0.1:${proxy.port}`;
    server = await startServer({
      DATABASE_URL: viaProxy.toString(),
      // On: the fair-use counters live in the database too and must fail as 503, not 500.
      RATE_LIMITS: 'on',
      FREE_MAX_MESSAGES: '100000',
      // The sweeper runs into the outage as well, and must not take the process down.
      SWEEP_INTERVAL_SECONDS: '1',
      DATABASE_POOL_SIZE: '4',
    });
    const smtpPort = server.smtpPort;
    const client = new CookieClient(server.baseUrl);
    const { json: inbox } = await client.get('/api/create');
    expect(inbox.email).toMatch(/@/);

    // Senders keep going through the whole outage; every 250 must be readable at the end.
    const acknowledged = new Set<string>();
    const temporaryFailures: number[] = [];
    let sending = true;
    const sender = async (index: number) => {
      const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, ignoreTLS: true, pool: true, maxConnections: 1, socketTimeout: 10_000 });
      for (let i = 0; i < 2000 && sending; i += 1) {
        const subject = `outage-${index}-${i}`;
        try {
          const info = await transport.sendMail({ from: 'load@example.org', to: inbox.email, subject, text: subject });
          if (info.response.startsWith('250')) acknowledged.add(subject);
        } catch (error) {
          temporaryFailures.push((error as { responseCode?: number }).responseCode ?? 0);
          await new Promise((done) => setTimeout(done, 50));
        }
      }
      transport.close();
    };
    const senders = [sender(0), sender(1)];
    expect(await eventually(async () => acknowledged.size >= 10, 10_000)).toBe(true);

    proxy.cut();
    const cookie = { cookie: `tempinbox_session=${client.cookie('tempinbox_session') ?? ''}` };
    const timed = async (path: string, headers: Record<string, string> = {}) => {
      const started = Date.now();
      const response = await fetch(`${server?.baseUrl ?? ''}${path}`, { headers, signal: AbortSignal.timeout(15_000) });
      const body = (await response.json().catch(() => null)) as { error?: { code?: string } } | null;
      return { status: response.status, code: body?.error?.code, ms: Date.now() - started };
    };
    const check = await timed(`/api/check/${inbox.username}`, cookie);
    expect(check).toMatchObject({ status: 503, code: 'unavailable' });
    expect(check.ms).toBeLessThan(FAST_FAILURE_MS);
    expect(await timed('/api/create')).toMatchObject({ status: 503, code: 'unavailable' });
    expect(await timed('/readyz')).toMatchObject({ status: 503, code: 'unavailable' });
    expect((await timed('/healthz')).status).toBe(200);
    // SMTP: a temporary failure the sender retries (451), never a 5xx bounce.
    let smtpError: { responseCode?: number } | undefined;
    try {
      await nodemailer
        .createTransport({ host: '127.0.0.1', port: smtpPort, ignoreTLS: true, socketTimeout: 15_000 })
        .sendMail({ from: 'x@example.org', to: inbox.email, subject: 'during outage', text: 'x' });
    } catch (error) {
      smtpError = error as { responseCode?: number };
    }
    expect(smtpError?.responseCode).toBe(451);
    // Long enough for idle pooled connections, the sweeper and the senders to meet the outage.
    await new Promise((done) => setTimeout(done, 2500));
    expect(server.child.exitCode).toBeNull();
    expect(temporaryFailures.length).toBeGreaterThan(0);
    expect(temporaryFailures.filter((code) => code >= 500)).toEqual([]);
    const acknowledgedDuringCut = acknowledged.size;

    proxy.restore();
    expect(await eventually(async () => (await timed('/readyz')).status === 200, RECOVERY_MS)).toBe(true);
    expect(await eventually(async () => acknowledged.size > acknowledgedDuringCut + 10, RECOVERY_MS)).toBe(true);
    sending = false;
    await Promise.all(senders);

    const after = await client.get(`/api/check/${inbox.username}`);
    expect(after.status).toBe(200);
    const stored = new Set<string>(after.json.emails.map((m: { subject: string }) => m.subject));
    expect([...acknowledged].filter((subject) => !stored.has(subject))).toEqual([]);
    expect(server.stdout()).toContain('database connection lost');
    console.log(
      `outage: ${acknowledged.size} acknowledged, ${stored.size} stored, ${temporaryFailures.length} temporary failures (451) during the cut, ${proxy.accepted()} connections via the proxy`,
    );
    expect(await server.stop()).toBe(0);
  });
});
