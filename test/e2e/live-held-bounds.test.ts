import { readFileSync } from 'node:fs';
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieClient } from '../helpers/cookie-client.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/postgres-test-database.js';
import { sendRawSmtp } from '../helpers/send-raw-smtp.js';
import { runBin, startServer, tempDataDir, type ServerProcess } from '../helpers/server-process.js';
import { SseClient } from '../helpers/sse-client.js';

/**
 * Held requests under attack (docs/api.md "Waiting for mail", "Event stream"): what a client
 * that stops reading may pin, how a SIGTERM ends held clients, the session cookie on held
 * answers, and access checked for the whole life of a held request. The real program on
 * real sockets, SQLite.
 */

const SESSION_COOKIE = 'tempinbox_session';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function newInbox(server: ServerProcess): Promise<{ client: CookieClient; username: string; cookie: string }> {
  const client = new CookieClient(server.baseUrl);
  const created = await client.get('/api/create');
  expect(created.status).toBe(200);
  return { client, username: created.json.username as string, cookie: `${SESSION_COOKIE}=${client.cookie(SESSION_COOKIE) ?? ''}` };
}

function send(server: ServerProcess, to: string, subject: string): Promise<string> {
  const raw = new TextEncoder().encode(`From: sender@example.org\r\nTo: ${to}\r\nSubject: ${subject}\r\n\r\nbody of ${subject}\r\n`);
  return sendRawSmtp(server.smtpPort, 'sender@example.org', to, raw);
}

/** A message whose text and HTML parts are each ~300 KB: both are cut at 256 KiB in a listing. */
function largeMessage(to: string, subject: string): Uint8Array {
  const line = `${'Lorem ipsum dolor sit amet, consectetur adipiscing elit '.repeat(1)}${subject}\r\n`;
  const text = line.repeat(Math.ceil(300_000 / line.length));
  const html = `<p>${text.replaceAll('\r\n', '</p>\r\n<p>')}</p>`;
  return new TextEncoder().encode(
    `From: sender@example.org\r\nTo: ${to}\r\nSubject: ${subject}\r\nMIME-Version: 1.0\r\n` +
      `Content-Type: multipart/alternative; boundary="b"\r\n\r\n` +
      `--b\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${text}\r\n` +
      `--b\r\nContent-Type: text/html; charset=utf-8\r\n\r\n${html}\r\n--b--\r\n`,
  );
}

/** Resident set size of a process, MB. */
function rssMegabytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN) / 1024;
}

/**
 * An HTTP request on a socket of its own that reads nothing: the request goes out, the socket
 * is paused, and the kernel's buffers fill. A paused socket cannot see the server close it;
 * `drainUntilClosed` reads again and resolves with the bytes read once the connection is
 * closed, or -1 if it is still open after `timeoutMs`.
 */
function nonReadingRequest(port: number, path: string, cookie: string): { socket: Socket; drainUntilClosed: (timeoutMs: number) => Promise<number> } {
  const socket = connect(port, '127.0.0.1');
  socket.pause();
  socket.on('error', () => undefined);
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: ${cookie}\r\nAccept: text/event-stream\r\n\r\n`);
  let received = 0;
  const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(received)));
  return {
    socket,
    drainUntilClosed: (timeoutMs) => {
      socket.on('data', (chunk: Buffer) => (received += chunk.length));
      socket.resume();
      return Promise.race([closed, sleep(timeoutMs).then(() => -1)]).finally(() => socket.destroy());
    },
  };
}

/**
 * A GET whose answer (status, headers, body) is read whole; never times out by itself. On a
 * keep-alive connection of its own, so that a `Connection: close` in the answer is the
 * server's choice, not an echo of the client's.
 */
function getWhole(url: string, cookie: string): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers: { cookie } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        agent.destroy();
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('a client that stops reading (one node, SQLite)', () => {
  let server: ServerProcess;
  let data: ReturnType<typeof tempDataDir>;

  beforeAll(async () => {
    data = tempDataDir();
    server = await startServer({ DATABASE_URL: data.databaseUrl, RATE_LIMITS: 'on' });
  });
  afterAll(async () => {
    await server?.stop();
    data?.cleanup();
  });

  it('pins at most 4 MiB per event stream: 30 non-reading streams over inboxes of large mail, and no more once they close', async () => {
    // Three sessions (the per-session cap is 10), each with an inbox of 24 large messages.
    const sessions = [await newInbox(server), await newInbox(server), await newInbox(server)];
    for (const { username } of sessions) {
      for (let i = 0; i < 24; i += 1) {
        const to = `${username}@tempinbox.test`;
        expect(await sendRawSmtp(server.smtpPort, 'sender@example.org', to, largeMessage(to, `large ${i}`))).toMatch(/^250/);
      }
    }
    const first = await sessions[0]?.client.get(`/api/check/${sessions[0]?.username ?? ''}?limit=1`);
    expect(first?.json.emails[0].truncated).toBe(true);
    await sleep(1500);
    const before = rssMegabytes(server.child.pid ?? 0);
    // Every stream replays its inbox from the start (since = a message id that is not there).
    const streams = sessions.flatMap(({ username, cookie }) =>
      Array.from({ length: 10 }, () => nonReadingRequest(server.httpPort, `/api/inbox/${username}/events?since=AAAAAAAAAAAAAAAAAAAAAA`, cookie)),
    );
    let highest = before;
    for (let i = 0; i < 16; i += 1) {
      await sleep(500);
      highest = Math.max(highest, rssMegabytes(server.child.pid ?? 0));
    }
    console.info(`30 non-reading streams: server RSS ${before.toFixed(0)} MB before, ${highest.toFixed(0)} MB at the highest while open`);
    // 30 streams × 4 MiB is the bound; the process's own garbage adds a little.
    expect(highest - before, `RSS ${before.toFixed(0)} → ${highest.toFixed(0)} MB with 30 streams open`).toBeLessThan(30 * 4 + 40);
    for (const { socket } of streams) socket.destroy();
    await sleep(3000);
    const after = rssMegabytes(server.child.pid ?? 0);
    console.info(`30 non-reading streams: server RSS ${after.toFixed(0)} MB 3 s after they closed`);
    expect(after - before, `RSS ${before.toFixed(0)} → ${after.toFixed(0)} MB after they closed`).toBeLessThan(30 * 4 + 40);
    // Their held slots are free again: the session can open a stream.
    const again = await SseClient.open(`${server.baseUrl}/api/inbox/${sessions[0]?.username ?? ''}/events`, { cookie: sessions[0]?.cookie });
    expect(again.status).toBe(200);
    again.close();
  }, 120_000);

  it('renews the session cookie on a held answer and on an event stream, as on every authenticated answer', async () => {
    const { username, cookie } = await newInbox(server);
    const waited = await getWhole(`${server.baseUrl}/api/check/${username}?wait=1`, cookie);
    expect(waited.status).toBe(200);
    expect(JSON.parse(waited.body).count).toBe(0);
    const renewal = (headers: IncomingHttpHeaders) => (headers['set-cookie'] ?? []).find((line) => line.startsWith(`${SESSION_COOKIE}=`));
    expect(renewal(waited.headers)).toMatch(/^tempinbox_session=[^;]+; Max-Age=2592000; Path=\/; HttpOnly; SameSite=Strict$/);
    const stream = await SseClient.open(`${server.baseUrl}/api/inbox/${username}/events`, { cookie });
    try {
      expect(stream.status).toBe(200);
      expect(renewal(stream.headers)).toBe(renewal(waited.headers));
    } finally {
      stream.close();
    }
  });
});

const postgres = await postgresAvailable('held requests losing access on PostgreSQL');

// The access check reads the session and the inbox: on PostgreSQL other statements than on SQLite.
describe.each([
  { name: 'SQLite', skip: false },
  { name: 'PostgreSQL', skip: !postgres },
])('access is checked for the whole life of a held request (one node, $name)', ({ name, skip }) => {
  let server: ServerProcess;
  let data: ReturnType<typeof tempDataDir> | undefined;
  let database: TestDatabase | undefined;
  let env: Record<string, string>;

  beforeAll(async () => {
    if (skip) return;
    if (name === 'PostgreSQL') database = await createTestDatabase();
    else data = tempDataDir();
    env = { DATABASE_URL: database?.url ?? data?.databaseUrl ?? '', RATE_LIMITS: 'on' };
    server = await startServer(env, 30_000);
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    data?.cleanup();
    await database?.drop();
  });

  it.skipIf(skip)('ends a stream once its session redeemed another license: no later message reaches it, and a held wait answers 404', async () => {
    const minted = await runBin(['license', 'create', '--count', '2', '--max-sessions', '5'], { ...env, LOG_LEVEL: 'warn' });
    expect(minted.code).toBe(0);
    const [first, second] = minted.stdout.trim().split('\n');
    // Session A holds license 1 and creates an inbox of it; session B reads it through the license.
    const a = new CookieClient(server.baseUrl);
    expect((await a.postJson('/api/premium/redeem', { key: first })).status).toBe(200);
    const created = await a.get('/api/create');
    expect(created.status).toBe(200);
    const username = created.json.username as string;
    const b = new CookieClient(server.baseUrl);
    expect((await b.postJson('/api/premium/redeem', { key: first })).status).toBe(200);
    const cookieB = `${SESSION_COOKIE}=${b.cookie(SESSION_COOKIE) ?? ''}`;
    const stream = await SseClient.open(`${server.baseUrl}/api/inbox/${username}/events`, { cookie: cookieB });
    expect(stream.status).toBe(200);
    const waiting = getWhole(`${server.baseUrl}/api/check/${username}?wait=30`, cookieB);
    expect(await send(server, `${username}@tempinbox.test`, 'before the switch')).toMatch(/^250/);
    await stream.until((events) => events.some((e) => e.event === 'message'));
    expect((await waiting).status).toBe(200);
    const waitingAgain = getWhole(`${server.baseUrl}/api/check/${username}?wait=30&since=${stream.lastEventId}`, cookieB);
    await sleep(300);

    // B switches to license 2: the inbox is no longer B's.
    expect((await b.postJson('/api/premium/redeem', { key: second })).status).toBe(200);
    expect((await b.get(`/api/check/${username}`)).status).toBe(404);
    expect(await send(server, `${username}@tempinbox.test`, 'after the switch')).toMatch(/^250/);
    const answer = await waitingAgain;
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body).error.code).toBe('inbox_not_found');
    await Promise.race([stream.ended, sleep(5000)]);
    stream.close();
    expect(stream.events.filter((e) => e.event === 'message').map((e) => JSON.parse(e.data).subject)).toEqual(['before the switch']);
    expect(await Promise.race([stream.ended.then(() => 'ended'), sleep(0).then(() => 'open')])).toBe('ended');
    // A still reads both.
    expect((await a.get(`/api/check/${username}`)).json.count).toBe(2);
  }, 60_000);

  it.skipIf(skip)('answers a held wait 404 when its inbox is deleted, and ends the inbox\'s streams', async () => {
    const { client, username, cookie } = await newInbox(server);
    const stream = await SseClient.open(`${server.baseUrl}/api/inbox/${username}/events`, { cookie });
    const started = Date.now();
    const waiting = getWhole(`${server.baseUrl}/api/check/${username}?wait=30`, cookie);
    await sleep(300);
    expect((await client.delete(`/api/inbox/${username}`)).status).toBe(200);
    const answer = await waiting;
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body).error.code).toBe('inbox_not_found');
    expect(Date.now() - started).toBeLessThan(5000);
    await Promise.race([stream.ended, sleep(5000)]);
    expect(await Promise.race([stream.ended.then(() => 'ended'), sleep(0).then(() => 'open')])).toBe('ended');
    stream.close();
  }, 30_000);
});

describe('SIGTERM with held clients', () => {
  it('answers held waits with Connection: close, drops stalled streams, and exits 0 within 2 s', async () => {
    const data = tempDataDir();
    const server = await startServer({ DATABASE_URL: data.databaseUrl, RATE_LIMITS: 'on' });
    try {
      const { username, cookie } = await newInbox(server);
      for (let i = 0; i < 12; i += 1) {
        const to = `${username}@tempinbox.test`;
        expect(await sendRawSmtp(server.smtpPort, 'sender@example.org', to, largeMessage(to, `large ${i}`))).toMatch(/^250/);
      }
      const other = await newInbox(server);
      const waiters = Array.from({ length: 4 }, () => getWhole(`${server.baseUrl}/api/check/${other.username}?wait=60`, other.cookie));
      // Streams that replay 12 large messages to clients that read none of it: they stall.
      const stalled = Array.from({ length: 4 }, () => nonReadingRequest(server.httpPort, `/api/inbox/${username}/events?since=AAAAAAAAAAAAAAAAAAAAAA`, cookie));
      await sleep(2000);
      const started = Date.now();
      const code = await server.stop();
      const elapsed = Date.now() - started;
      console.info(`SIGTERM with 4 held waits and 4 stalled streams: exit ${code} after ${elapsed} ms`);
      expect(code).toBe(0);
      expect(elapsed).toBeLessThan(2000);
      const answers = await Promise.all(waiters);
      expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200]);
      expect(answers.map((answer) => answer.headers.connection)).toEqual(['close', 'close', 'close', 'close']);
      // The stalled streams were cut: each client reads what the kernel kept, then the end.
      const read = await Promise.all(stalled.map(({ drainUntilClosed }) => drainUntilClosed(5000)));
      expect(read.every((bytes) => bytes >= 0)).toBe(true);
    } finally {
      await server.stop();
      data.cleanup();
    }
  }, 60_000);
});
