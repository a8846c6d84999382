import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/load-config.js';
import { createLogger } from '../../src/observability/logger.js';
import { CookieClient } from '../helpers/cookie-client.js';
import { sendRawSmtp } from '../helpers/send-raw-smtp.js';

/**
 * Any HTTP answer whose client accepts no bytes for a while is abandoned and its socket
 * destroyed (docs/api.md "Fair use and limits"): here a 9 MB raw download to a client that
 * sends its request and then never reads. The 60 s of production are 1 s here (an override
 * of the composition root, for tests only).
 */

const STALL_MS = 1000;

/** A message of ~9 MB: more than the kernel's socket buffers on both sides hold. */
function hugeMessage(to: string): Uint8Array {
  const line = `${'x'.repeat(998)}\r\n`;
  return new TextEncoder().encode(`From: sender@example.org\r\nTo: ${to}\r\nSubject: huge\r\n\r\n${line.repeat(9000)}`);
}

/**
 * Sends `request` on a socket of its own and reads nothing until `resume()`: then it reads
 * what the kernel kept for it and resolves with the bytes it got once the connection closes,
 * or with -1 if it was still open after `timeoutMs` (a paused socket cannot see the server
 * close it: that shows only once it reads again).
 */
function nonReading(port: number, request: string): { resume: (timeoutMs: number) => Promise<number> } {
  const socket = connect(port, '127.0.0.1');
  socket.pause();
  socket.on('error', () => undefined);
  socket.write(request);
  let received = 0;
  const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(received)));
  return {
    resume: (timeoutMs) => {
      socket.on('data', (chunk: Buffer) => (received += chunk.length));
      socket.resume();
      return Promise.race([closed, new Promise<number>((resolve) => setTimeout(() => resolve(-1), timeoutMs))]).finally(() => socket.destroy());
    },
  };
}

describe('an answer the client stops taking', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tempinbox-stalled-'));
  let app: Awaited<ReturnType<typeof createApp>>;
  let httpPort = 0;
  let smtpPort = 0;

  beforeAll(async () => {
    app = await createApp(
      loadConfig({ PORT: '0', SMTP_PORT: '0', HOST: '127.0.0.1', RATE_LIMITS: 'off', MAIL_AUTH: 'off', DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}` }),
      { logger: createLogger('silent'), httpStall: { timeoutMs: STALL_MS, sweepMs: 100 } },
    );
    ({ httpPort, smtpPort } = await app.start());
  });
  afterAll(async () => {
    await app?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is abandoned once the client took nothing for the stall time, and a reading client of the same answer is served whole', async () => {
    const client = new CookieClient(`http://127.0.0.1:${httpPort}`);
    const username = (await client.get('/api/create')).json.username as string;
    const to = `${username}@tempinbox.test`;
    expect(await sendRawSmtp(smtpPort, 'sender@example.org', to, hugeMessage(to))).toMatch(/^250/);
    const id = (await client.get(`/api/check/${username}`)).json.emails[0].id as string;
    const cookie = `tempinbox_session=${client.cookie('tempinbox_session') ?? ''}`;

    const stalled = nonReading(httpPort, `GET /api/messages/${id}/raw HTTP/1.1\r\nHost: x\r\nCookie: ${cookie}\r\n\r\n`);
    await new Promise((resolve) => setTimeout(resolve, STALL_MS * 3));
    // Cut off: the client finds only what the kernel had buffered before the server gave up.
    const got = await stalled.resume(5000);
    expect(got, 'the server closed the stalled download').toBeGreaterThanOrEqual(0);
    expect(got).toBeLessThan(9_000_000);

    // A client that reads, however slowly its reads come, gets the whole answer.
    const whole = await client.get(`/api/messages/${id}/raw`);
    expect(whole.status).toBe(200);
    expect(whole.text.length).toBeGreaterThan(9_000_000);
  }, 60_000);
});
