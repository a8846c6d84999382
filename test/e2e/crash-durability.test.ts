import { afterAll, describe, expect, it } from 'vitest';
import { checkAll, CookieClient } from '../helpers/cookie-client.js';
import { startServer, tempDataDir, type ServerProcess } from '../helpers/server-process.js';
import { startSmtpLoad } from '../helpers/smtp-load.js';

/** Senders in parallel, each on its own pooled connection. */
const CONNECTIONS = 8;
/** Upper bound of messages a sender tries before the kill stops it. */
const MAX_PER_SENDER = 400;

/**
 * Contract §3: `250` only once the message is committed. Under SMTP load the server gets
 * SIGKILL; after a restart on the same file, every message that got its 250 must be there.
 */
describe('kill -9 under SMTP load', () => {
  const data = tempDataDir();
  let server: ServerProcess | undefined;

  afterAll(async () => {
    await server?.kill9();
    data.cleanup();
  });

  it('keeps every message answered 250', async () => {
    const env = { DATABASE_URL: data.databaseUrl, RATE_LIMITS: 'off', FREE_MAX_MESSAGES: '100000' };
    server = await startServer(env);
    const client = new CookieClient(server.baseUrl);
    const { json: inbox } = await client.get('/api/create');

    const load = startSmtpLoad({ port: server.smtpPort, to: inbox.email, connections: CONNECTIONS, maxPerSender: MAX_PER_SENDER });
    // Kill once a fair amount has been acknowledged (bounded wait).
    await load.waitForAcks(150, 15_000);
    await server.kill9();
    const { acknowledged, attempts } = await load.finish();
    expect(acknowledged.size).toBeGreaterThanOrEqual(150);

    server = await startServer(env);
    const after = new CookieClient(server.baseUrl);
    after.setCookie('tempinbox_session', client.cookie('tempinbox_session'));
    const listed = await checkAll(after, inbox.username);
    const stored = new Set<string>(listed.map((m) => m.subject));
    const lost = [...acknowledged].filter((subject) => !stored.has(subject));
    expect(lost).toEqual([]);
    // Whatever was stored was sent by us (no duplicates from a half-written transaction).
    expect(listed.length).toBe(stored.size);
    expect(stored.size).toBeLessThanOrEqual(attempts);
    console.log(`kill -9: ${acknowledged.size} acknowledged, ${stored.size} stored after restart, ${attempts} attempted`);
  });
});
