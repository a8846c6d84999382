import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieClient } from '../helpers/cookie-client.js';
import { sendRawSmtp } from '../helpers/send-raw-smtp.js';
import { startServer, tempDataDir, type ServerProcess } from '../helpers/server-process.js';
import { SseClient } from '../helpers/sse-client.js';

const SESSION_COOKIE = 'tempinbox_session';

/** A client with a fresh session and inbox. */
async function newInbox(server: ServerProcess): Promise<{ client: CookieClient; username: string; cookie: string }> {
  const client = new CookieClient(server.baseUrl);
  const created = await client.get('/api/create');
  expect(created.status).toBe(200);
  return { client, username: created.json.username as string, cookie: `${SESSION_COOKIE}=${client.cookie(SESSION_COOKIE) ?? ''}` };
}

/** Sends one small message over SMTP; resolves with the reply to DATA. */
function send(server: ServerProcess, to: string, subject: string): Promise<string> {
  const raw = new TextEncoder().encode(`From: sender@example.org\r\nTo: ${to}\r\nSubject: ${subject}\r\n\r\nbody of ${subject}\r\n`);
  return sendRawSmtp(server.smtpPort, 'sender@example.org', to, raw);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('live mail over real sockets (one node, SQLite)', () => {
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

  it('answers a waiting check within 1 s of the 250 of an SMTP delivery', async () => {
    const { client, username } = await newInbox(server);
    const started = Date.now();
    const waiting = client.get(`/api/check/${username}?wait=20`);
    await sleep(300);
    const reply = await send(server, `${username}@tempinbox.test`, 'wake up');
    const acked = Date.now();
    expect(reply).toMatch(/^250/);
    const answer = await waiting;
    const answered = Date.now();
    expect(answer.status).toBe(200);
    expect(answer.json.count).toBe(1);
    expect(answer.json.emails[0].subject).toBe('wake up');
    expect(answer.json.emails[0].recipient).toBe(`${username}@tempinbox.test`);
    expect(answered - acked).toBeLessThan(1000);
    // It was held, not answered before the mail existed.
    expect(answered - started).toBeGreaterThanOrEqual(300);
  });

  it('answers count 0 when the wait is up', async () => {
    const { client, username } = await newInbox(server);
    const started = Date.now();
    const answer = await client.get(`/api/check/${username}?wait=1`);
    const elapsed = Date.now() - started;
    expect(answer.status).toBe(200);
    expect(answer.json).toMatchObject({ success: true, count: 0, emails: [], has_more: false });
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(5000);
  });

  it('holds a filtered wait until a message to its +tag arrives, and answers only that one', async () => {
    const { client, username } = await newInbox(server);
    const waiting = client.get(`/api/check/${username}?wait=20&to=${encodeURIComponent('+signup@')}`);
    let settled = false;
    void waiting.then(() => (settled = true));
    await sleep(200);
    expect(await send(server, `${username}+other@tempinbox.test`, 'not this one')).toMatch(/^250/);
    await sleep(500);
    expect(settled).toBe(false);
    expect(await send(server, `${username}+SignUp@tempinbox.test`, 'this one')).toMatch(/^250/);
    const answer = await waiting;
    expect(answer.json.count).toBe(1);
    expect(answer.json.emails[0]).toMatchObject({ subject: 'this one', recipient: `${username}+signup@tempinbox.test` });
    // Without a filter both are there, each with its own recipient.
    const all = await client.get(`/api/check/${username}`);
    expect(all.json.emails.map((m: { recipient: string }) => m.recipient)).toEqual([`${username}+signup@tempinbox.test`, `${username}+other@tempinbox.test`]);
    const bySubject = await client.get(`/api/check/${username}?subject=NOT%20THIS&from=sender@`);
    expect(bySubject.json.emails.map((m: { subject: string }) => m.subject)).toEqual(['not this one']);
  });

  it('caps held requests: 10 per session, 100 per client address, then 429 rate_limited', async () => {
    const streams: SseClient[] = [];
    try {
      const first = await newInbox(server);
      for (let i = 0; i < 10; i += 1) {
        const stream = await SseClient.open(`${server.baseUrl}/api/inbox/${first.username}/events`, { cookie: first.cookie });
        expect(stream.status).toBe(200);
        streams.push(stream);
      }
      const overSession = await first.client.get(`/api/check/${first.username}?wait=5`);
      expect(overSession.status).toBe(429);
      expect(overSession.json.error.code).toBe('rate_limited');
      expect(overSession.headers.get('retry-after')).toMatch(/^\d+$/);
      // A wait that need not be held (`wait=0`) is still answered.
      expect((await first.client.get(`/api/check/${first.username}`)).status).toBe(200);

      for (let s = 0; s < 9; s += 1) {
        const other = await newInbox(server);
        const opened = await Promise.all(Array.from({ length: 10 }, () => SseClient.open(`${server.baseUrl}/api/inbox/${other.username}/events`, { cookie: other.cookie })));
        streams.push(...opened);
        expect(opened.map((stream) => stream.status)).toEqual(Array(10).fill(200));
      }
      const last = await newInbox(server);
      const overClient = await SseClient.open(`${server.baseUrl}/api/inbox/${last.username}/events`, { cookie: last.cookie });
      expect(overClient.status).toBe(429);
      await overClient.ended;
      // Closing streams frees their slots, once the server has seen the sockets close (a moment
      // after the client closes them): asked again until then, for at most 5 s.
      for (const stream of streams.splice(0, 10)) stream.close();
      await expect
        .poll(async () => (await last.client.get(`/api/check/${last.username}?wait=1`)).status, { timeout: 5_000, interval: 100 })
        .toBe(200);
    } finally {
      for (const stream of streams) stream.close();
    }
  }, 60_000);

  it('answers an event stream with the API headers and its own (the reply is written past Fastify)', async () => {
    const { username, cookie } = await newInbox(server);
    const stream = await SseClient.open(`${server.baseUrl}/api/inbox/${username}/events`, { cookie });
    try {
      expect(stream.status).toBe(200);
      expect(stream.headers).toMatchObject({
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        'x-accel-buffering': 'no',
        'x-content-type-options': 'nosniff',
        'x-frame-options': 'DENY',
      });
      expect(stream.headers['content-security-policy']).toBeDefined();
      expect(stream.headers['ratelimit-limit']).toMatch(/^[0-9]+$/);
    } finally {
      stream.close();
    }
  });

  it('counts a stream in /metrics when the client leaves (its reply is hijacked, past Fastify hooks)', async () => {
    const { client, username, cookie } = await newInbox(server);
    const route = 'route="/api/inbox/:username/events",status="200"';
    const counted = async () => {
      const text = (await client.get('/metrics')).text;
      return Number(new RegExp(`^tempinbox_http_requests_total\\{method="GET",${route}\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);
    };
    const before = await counted();
    const stream = await SseClient.open(`${server.baseUrl}/api/inbox/${username}/events`, { cookie });
    // A stream owns its connection (docs/api.md "Event stream"): nothing else is sent on it.
    expect(stream.headers.connection).toBe('close');
    expect(stream.headers['transfer-encoding']).toBe('chunked');
    expect(await send(server, `${username}@tempinbox.test`, 'over the stream')).toMatch(/^250/);
    await stream.until((events) => events.some((e) => e.event === 'message'));
    stream.close();
    // The stream notices the client left and reports itself; poll /metrics a bounded while.
    let after = before;
    for (let i = 0; i < 50 && after === before; i += 1) {
      await sleep(100);
      after = await counted();
    }
    expect(after).toBe(before + 1);
  });

  it('streams every message once across disconnects: Last-Event-ID resumes where the client left off', async () => {
    const { username, cookie } = await newInbox(server);
    const url = `${server.baseUrl}/api/inbox/${username}/events`;
    const TOTAL = 24;
    const sent: string[] = [];
    const sending = (async () => {
      for (let i = 0; i < TOTAL; i += 1) {
        expect(await send(server, `${username}+n${i}@tempinbox.test`, `n${i}`)).toMatch(/^250/);
        sent.push(`n${i}`);
        await sleep(40);
      }
    })();
    const received: { id: string; subject: string }[] = [];
    let lastEventId = '';
    // Reconnect three times while mail keeps arriving, as a browser on a flaky network does.
    for (let round = 0; round < 4 && received.length < TOTAL; round += 1) {
      const stream = await SseClient.open(url, { cookie, lastEventId });
      expect(stream.status).toBe(200);
      expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
      const want = round < 3 ? Math.min(TOTAL, received.length + 5) : TOTAL;
      await stream.until((events) => received.length + events.filter((e) => e.event === 'message').length >= want, 20_000);
      stream.close();
      for (const event of stream.events.filter((e) => e.event === 'message')) {
        const message = JSON.parse(event.data) as { id: string; subject: string };
        expect(event.id).toBe(message.id);
        received.push({ id: message.id, subject: message.subject });
      }
      lastEventId = stream.lastEventId;
      // Offline for a while: several messages arrive before the client is back.
      await sleep(300);
    }
    await sending;
    expect(received.map((m) => m.subject)).toEqual(sent);
    expect(new Set(received.map((m) => m.id)).size).toBe(TOTAL);
  }, 60_000);

  it('sends deleted for a deleted message, and resumes with ?since', async () => {
    const { client, username, cookie } = await newInbox(server);
    expect(await send(server, `${username}@tempinbox.test`, 'first')).toMatch(/^250/);
    expect(await send(server, `${username}@tempinbox.test`, 'second')).toMatch(/^250/);
    const [second, first] = (await client.get(`/api/check/${username}`)).json.emails as { id: string }[];
    const stream = await SseClient.open(`${server.baseUrl}/api/inbox/${username}/events?since=${first?.id ?? ''}`, { cookie });
    try {
      await stream.until((events) => events.some((e) => e.event === 'message'));
      expect(stream.events.filter((e) => e.event === 'message').map((e) => e.id)).toEqual([second?.id]);
      expect((await client.delete(`/api/messages/${first?.id ?? ''}`)).status).toBe(200);
      await stream.until((events) => events.some((e) => e.event === 'deleted'));
      expect(JSON.parse(stream.events.find((e) => e.event === 'deleted')?.data ?? '{}')).toEqual({ id: first?.id });
    } finally {
      stream.close();
    }
  });
});

describe('shutdown with held requests', () => {
  it('SIGTERM answers 50 open waiters and ends every stream, then exits 0 within 10 s', async () => {
    const data = tempDataDir();
    const server = await startServer({ DATABASE_URL: data.databaseUrl, RATE_LIMITS: 'on' });
    try {
      const waiters: Promise<{ status: number; json: { count: number } }>[] = [];
      const streams: SseClient[] = [];
      for (let s = 0; s < 10; s += 1) {
        const { client, username, cookie } = await newInbox(server);
        for (let i = 0; i < 5; i += 1) waiters.push(client.get(`/api/check/${username}?wait=60`));
        for (let i = 0; i < 5; i += 1) streams.push(await SseClient.open(`${server.baseUrl}/api/inbox/${username}/events`, { cookie }));
      }
      expect(streams.every((stream) => stream.status === 200)).toBe(true);
      await sleep(500);
      const started = Date.now();
      const code = await server.stop();
      const elapsed = Date.now() - started;
      expect(code).toBe(0);
      expect(elapsed).toBeLessThan(10_000);
      const answers = await Promise.all(waiters);
      expect(answers.map((answer) => answer.status)).toEqual(Array(50).fill(200));
      expect(answers.every((answer) => answer.json.count === 0)).toBe(true);
      await Promise.all(streams.map((stream) => stream.ended));
    } finally {
      await server.stop();
      data.cleanup();
    }
  }, 60_000);
});

describe('expiry of a followed inbox', () => {
  it('sends expired and ends the stream when the inbox expires; a wait ends at the expiry with count 0', async () => {
    const data = tempDataDir();
    const server = await startServer({ DATABASE_URL: data.databaseUrl, FREE_TTL_SECONDS: '3' });
    try {
      const { client, username, cookie } = await newInbox(server);
      const created = Date.now();
      const stream = await SseClient.open(`${server.baseUrl}/api/inbox/${username}/events`, { cookie });
      const waited = await client.get(`/api/check/${username}?wait=30`);
      expect(waited.status).toBe(200);
      expect(waited.json.count).toBe(0);
      await stream.ended;
      const elapsed = Date.now() - created;
      expect(stream.events.map((e) => e.event)).toEqual(['expired']);
      expect(elapsed).toBeGreaterThanOrEqual(2500);
      expect(elapsed).toBeLessThan(10_000);
      expect((await client.get(`/api/check/${username}`)).status).toBe(410);
    } finally {
      await server.stop();
      data.cleanup();
    }
  }, 30_000);
});
