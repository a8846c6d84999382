import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendRawSmtp } from '../../../test/helpers/send-raw-smtp.js';
import { startTcpProxy } from '../../../test/helpers/tcp-proxy.js';
import { TempInboxClient, TempInboxError, type Message } from '../src/index.js';
import { deliver, sleep, startKitServer, type KitServer } from './kit-server.js';

/** A local HTTP server answering each request with the next of `answers` (the last one repeats). */
async function scriptedServer(answers: Array<{ status: number; headers?: Record<string, string>; body: unknown }>): Promise<{ url: string; requests: string[]; close: () => Promise<void> }> {
  const requests: string[] = [];
  const server: Server = createServer((request, response) => {
    requests.push(request.url ?? '');
    const answer = answers[Math.min(requests.length - 1, answers.length - 1)];
    if (answer === undefined) throw new Error('no answers');
    response.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8', ...answer.headers });
    response.end(JSON.stringify(answer.body));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { url: `http://127.0.0.1:${address.port}`, requests, close: () => new Promise((done) => server.close(() => done())) };
}

const rateLimited = { status: 429, headers: { 'retry-after': '1' }, body: { success: false, error: { code: 'rate_limited', message: 'Too many requests.' } } };

describe('retries', () => {
  it('waits out a 429 with Retry-After, then answers (a plain call)', async () => {
    const fake = await scriptedServer([rateLimited, { status: 200, body: { domains: ['tempinbox.test'] } }]);
    try {
      const started = Date.now();
      expect(await new TempInboxClient({ baseUrl: fake.url }).domains()).toEqual(['tempinbox.test']);
      expect(Date.now() - started).toBeGreaterThanOrEqual(950);
      expect(fake.requests).toHaveLength(2);
    } finally {
      await fake.close();
    }
  });

  it('waits out a 429 during a wait, then returns the message', async () => {
    const message = { id: 'AAAAAAAAAAAAAAAAAAAAAB', subject: 'after the 429', codes: [], links: [] };
    const fake = await scriptedServer([rateLimited, { status: 200, body: { success: true, count: 1, emails: [message], has_more: false } }]);
    try {
      const started = Date.now();
      const got = await new TempInboxClient({ baseUrl: fake.url }).inbox('someone@tempinbox.test').waitForMessage({ timeout: 5_000 });
      expect(got.subject).toBe('after the 429');
      expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    } finally {
      await fake.close();
    }
  });

  it('gives up on a call after 3 retries with rate_limited and the Retry-After', async () => {
    const fake = await scriptedServer([{ ...rateLimited, headers: { 'retry-after': '0' } }]);
    try {
      const error = await new TempInboxClient({ baseUrl: fake.url }).domains().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(TempInboxError);
      expect(error).toMatchObject({ status: 429, code: 'rate_limited', retryAfter: 0 });
      expect(fake.requests).toHaveLength(4);
    } finally {
      await fake.close();
    }
  });

  it('reports an unreachable server as status 0, network_error', async () => {
    const fake = await scriptedServer([{ status: 200, body: {} }]);
    await fake.close();
    const error = await new TempInboxClient({ baseUrl: fake.url }).domains().catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: 'TempInboxError', status: 0, code: 'network_error' });
  });
});

describe('against a real server (SQLite)', () => {
  let kit: KitServer;
  beforeAll(async () => {
    kit = await startKitServer({ RATE_LIMITS: 'off' });
  }, 60_000);
  afterAll(async () => kit?.close());

  it('resumes a session in a new client', async () => {
    const first = new TempInboxClient({ baseUrl: kit.server.baseUrl });
    expect(first.session).toBeUndefined();
    const inbox = await first.createInbox();
    expect(inbox.address).toMatch(/^[a-z][a-z0-9]{9}@tempinbox\.test$/);
    expect(inbox.expiresAt?.getTime()).toBeGreaterThan(Date.now());
    expect(first.session).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await deliver(kit.server.smtpPort, inbox.address, 'for the second client');
    const second = new TempInboxClient({ baseUrl: kit.server.baseUrl, session: first.session });
    expect((await second.inboxes()).map((handle) => handle.address)).toEqual([inbox.address]);
    expect((await second.inbox(inbox.address).waitForMessage({ timeout: 5_000 })).subject).toBe('for the second client');
    // Without the session the same inbox is not there for anyone else.
    const stranger = await new TempInboxClient({ baseUrl: kit.server.baseUrl }).inbox(inbox.address).waitForMessage({ timeout: 2_000 }).catch((caught: unknown) => caught);
    expect(stranger).toMatchObject({ status: 401, code: 'session_required' });
  });

  it('returns raw() byte for byte, 8-bit attachment included', async () => {
    const client = new TempInboxClient({ baseUrl: kit.server.baseUrl });
    const inbox = await client.createInbox();
    const high = Array.from({ length: 128 }, (_, i) => 0x80 + i);
    const head = new TextEncoder().encode(
      `From: sender@example.org\r\nTo: ${inbox.address}\r\nSubject: eight bits\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n` +
        '--b\r\nContent-Type: text/plain\r\n\r\nsee attachment\r\n--b\r\nContent-Type: application/octet-stream; name="high.bin"\r\nContent-Disposition: attachment; filename="high.bin"\r\nContent-Transfer-Encoding: 8bit\r\n\r\n',
    );
    const tail = new TextEncoder().encode('\r\n--b--\r\n');
    const sent = new Uint8Array([...head, ...high.slice(0, 64), 13, 10, ...high.slice(64), ...tail]);
    expect(await sendRawSmtp(kit.server.smtpPort, 'sender@example.org', inbox.address, sent)).toMatch(/^250/);
    const message = await inbox.waitForMessage({ timeout: 5_000 });
    const raw = await inbox.raw(message.id);
    expect(new TextDecoder().decode(raw.slice(0, 12))).toBe('Return-Path:');
    expect(Buffer.from(raw.slice(raw.length - sent.length)).equals(Buffer.from(sent))).toBe(true);
    const detail = await inbox.message(message.id);
    expect(detail.attachments).toMatchObject([{ filename: 'high.bin', size: 130 }]);
    expect(detail.size).toBe(raw.length);
  });

  it('waits for a link by match, lists every message, and deletes the inbox', async () => {
    const client = new TempInboxClient({ baseUrl: kit.server.baseUrl });
    const inbox = await client.createInbox();
    const html = '<p><a href="https://example.org/help">Help</a> <a href="https://example.org/verify?t=42">Confirm your address</a></p>';
    const raw = new TextEncoder().encode(`From: sender@example.org\r\nTo: ${inbox.address}\r\nSubject: links\r\nContent-Type: text/html; charset=utf-8\r\n\r\n${html}\r\n`);
    await sendRawSmtp(kit.server.smtpPort, 'sender@example.org', inbox.address, raw);
    const byText = await inbox.waitForLink({ match: 'CONFIRM', timeout: 5_000 });
    expect(byText).toMatchObject({ url: 'https://example.org/verify?t=42', text: 'Confirm your address' });
    // The message was returned by that wait: a second link wait has nothing left.
    await expect(inbox.waitForLink({ timeout: 1_000 })).rejects.toMatchObject({ code: 'timeout' });
    const again = client.inbox(inbox.address);
    // timeout 0 still returns what is already there.
    expect((await again.waitForLink({ match: /help$/, timeout: 0 })).url).toBe('https://example.org/help');
    const listed: Message[] = [];
    for await (const message of inbox.messages()) listed.push(message);
    expect(listed.map((message) => message.subject)).toEqual(['links']);
    await inbox.delete();
    await expect(inbox.waitForMessage({ timeout: 1_000 })).rejects.toMatchObject({ status: 404, code: 'inbox_not_found' });
  });

  it('follows the stream across dropped connections: misses nothing, repeats nothing', async () => {
    const proxy = await startTcpProxy('127.0.0.1', kit.server.httpPort);
    const stop = new AbortController();
    try {
      const client = new TempInboxClient({ baseUrl: `http://127.0.0.1:${proxy.port}` });
      const inbox = await client.createInbox();
      const seen: Message[] = [];
      const following = (async () => {
        for await (const message of inbox.follow({ signal: stop.signal })) seen.push(message);
      })();
      const until = async (count: number) => {
        const deadline = Date.now() + 15_000;
        while (seen.length < count && Date.now() < deadline) await sleep(50);
      };
      // Dropped before the first message, on an inbox that was empty when follow began.
      await sleep(700);
      proxy.cut();
      await deliver(kit.server.smtpPort, inbox.address, 'm1');
      await sleep(300);
      proxy.restore();
      await until(1);
      // Dropped after a message: resumed with Last-Event-ID.
      await deliver(kit.server.smtpPort, inbox.address, 'm2');
      await until(2);
      proxy.cut();
      await deliver(kit.server.smtpPort, inbox.address, 'm3');
      await deliver(kit.server.smtpPort, inbox.address, 'm4');
      await sleep(300);
      proxy.restore();
      await deliver(kit.server.smtpPort, inbox.address, 'm5');
      await until(5);
      await sleep(300);
      stop.abort();
      await following;
      expect(seen.map((message) => message.subject)).toEqual(['m1', 'm2', 'm3', 'm4', 'm5']);
      expect(new Set(seen.map((message) => message.id)).size).toBe(5);
      expect(proxy.accepted()).toBeGreaterThanOrEqual(4);
    } finally {
      stop.abort();
      await proxy.close();
    }
  }, 40_000);

  it('retries a wait whose server stopped, then rejects with network_error', async () => {
    const own = await startKitServer();
    let calls = 0;
    let stoppedAt = 0;
    let callsAfterStop = 0;
    const counting: typeof fetch = (input, init) => {
      calls += 1;
      if (stoppedAt > 0) callsAfterStop += 1;
      return fetch(input, init);
    };
    try {
      const client = new TempInboxClient({ baseUrl: own.server.baseUrl, fetch: counting });
      const inbox = await client.createInbox();
      const started = Date.now();
      const waiting = inbox.waitForMessage({ timeout: 4_000 }).catch((caught: unknown) => caught);
      await sleep(500);
      await own.server.stop();
      stoppedAt = Date.now();
      const error = await waiting;
      expect(error).toBeInstanceOf(TempInboxError);
      expect(error).toMatchObject({ status: 0, code: 'network_error' });
      expect(callsAfterStop).toBeGreaterThanOrEqual(2);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(calls).toBeGreaterThan(callsAfterStop);
    } finally {
      await own.close();
    }
  }, 30_000);
});
