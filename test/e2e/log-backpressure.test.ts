import { afterEach, describe, expect, it } from 'vitest';
import { CookieClient } from '../helpers/cookie-client.js';
import { startServer, tempDataDir, type ServerProcess } from '../helpers/server-process.js';
import { startSmtpLoad } from '../helpers/smtp-load.js';

/**
 * The log is written without blocking the event loop (docs/architecture.md "Logging"): when
 * whoever reads stdout stops reading (a stuck log shipper, a full pipe), the service keeps
 * taking mail and answering, and the lines wait in a bounded buffer until the reader resumes.
 * A synchronous write to a full pipe would stop the whole process.
 */
describe('a log reader that stops reading', () => {
  let server: ServerProcess | undefined;
  let data: ReturnType<typeof tempDataDir> | undefined;

  afterEach(async () => {
    server?.child.stdout?.resume();
    await server?.stop();
    data?.cleanup();
    server = undefined;
  });

  it('does not stall SMTP or HTTP; every line arrives once it reads again', async () => {
    data = tempDataDir();
    server = await startServer({ DATABASE_URL: data.databaseUrl, RATE_LIMITS: 'off', FREE_MAX_MESSAGES: '10000' });
    const owner = new CookieClient(server.baseUrl);
    const inbox = (await owner.get('/api/create')).json as { email: string };
    // From here on nobody reads the service's stdout: the pipe (64 KiB on Linux) fills up.
    server.child.stdout?.pause();

    // ~300 B of "message accepted" per message: 400 messages are about twice the pipe's size.
    const messages = 400;
    const load = startSmtpLoad({ port: server.smtpPort, to: inbox.email, connections: 4, maxPerSender: messages / 4 });
    await load.waitForAcks(messages, 60_000);
    const { acknowledged } = await load.finish();
    expect(acknowledged.size).toBe(messages);
    const started = performance.now();
    const health = await fetch(`${server.baseUrl}/healthz`, { signal: AbortSignal.timeout(5000) });
    expect(health.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(2000);

    const stdout = server.child.stdout;
    // 'exit' may come before the last of stdout is read: wait for its end too.
    const ended = new Promise((resolve) => stdout?.once('close', resolve));
    stdout?.resume();
    expect(await server.stop()).toBe(0);
    await ended;
    const accepted = server.stdout().split('\n').filter((line) => line.includes('"msg":"message accepted"'));
    expect(accepted.length).toBe(messages);
  }, 90_000);
});
