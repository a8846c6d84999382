import { connect, type AddressInfo, type Socket } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { HeldExchange } from './held-exchange.js';

interface Held {
  exchange: HeldExchange;
  socket: Socket | null;
}

/**
 * A Fastify server whose /held route detaches and waits until the test answers it (as the
 * check handler does with a wait), and whose /plain route answers at once.
 */
async function serve(keepAliveTimeout?: number): Promise<{ app: FastifyInstance; port: number; held: Held[]; reports: unknown[][] }> {
  const app = Fastify({ keepAliveTimeout });
  const held: Held[] = [];
  const reports: unknown[][] = [];
  app.addHook('onRequest', async (_request, reply) => {
    reply.header('X-From-Hook', 'yes');
  });
  app.get('/held', async (request, reply) => {
    reply.header('Set-Cookie', ['a=1; Path=/', 'b=2; Path=/']);
    const exchange = new HeldExchange(request, reply, '/held', (...args) => reports.push(args));
    const socket = request.raw.socket;
    await exchange.detach();
    held.push({ exchange, socket });
  });
  app.get('/plain', async () => ({ plain: true }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, port: (app.server.address() as AddressInfo).port, held, reports };
}

/** A raw client connection that collects what it receives. */
function rawClient(port: number): { socket: Socket; received: () => string; closed: Promise<void> } {
  const socket = connect(port, '127.0.0.1');
  let text = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  return { socket, received: () => text, closed };
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200 && !check(); i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
  if (!check()) throw new Error(`timed out waiting for ${what}`);
}

const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

describe('HeldExchange', () => {
  it('answers a held request with the headers gathered before the wait, then serves the next request on the same connection', async () => {
    const { app, port, held, reports } = await serve();
    apps.push(app);
    const client = rawClient(port);
    client.socket.write('GET /held HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => held.length === 1, 'the detach');
    const [first] = held;
    expect(first?.exchange.detached).toBe(true);
    // Out of node:http while it waits: no parser, none of node:http's listeners.
    expect((first?.socket as Socket & { parser?: unknown }).parser).toBeNull();
    expect(first?.socket?.listenerCount('timeout')).toBe(0);
    first?.exchange.answer(200, { 'Content-Type': 'application/json; charset=utf-8' }, '{"n":"é"}');
    await until(() => client.received().includes('{"n":"é"}'), 'the answer');
    const answer = client.received();
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(answer).toContain('x-from-hook: yes\r\n');
    expect(answer).toContain('set-cookie: a=1; Path=/\r\nset-cookie: b=2; Path=/\r\n');
    expect(answer).toContain('content-length: 10\r\n');
    expect(answer).toContain('connection: keep-alive\r\n');
    expect(reports).toEqual([['GET', '/held', 200, expect.any(Number)]]);
    // node:http took the connection back: the next request on it is parsed and answered.
    client.socket.write('GET /plain HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => client.received().includes('{"plain":true}'), 'the second answer');
    // And again a held one, on the same connection.
    client.socket.write('GET /held HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => held.length === 2, 'the second detach');
    expect(held[1]?.socket).toBe(first?.socket);
    held[1]?.exchange.answer(200, {}, 'again');
    await until(() => client.received().endsWith('again'), 'the third answer');
    client.socket.destroy();
  });

  it('closes a handed-back connection that stays idle past the keep-alive timeout, as node:http does', async () => {
    const { app, port, held } = await serve(300);
    apps.push(app);
    const client = rawClient(port);
    client.socket.write('GET /held HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => held.length === 1, 'the detach');
    held[0]?.exchange.answer(200, {}, 'ok');
    const started = Date.now();
    await client.closed;
    expect(client.received()).toContain('connection: keep-alive\r\n');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('closes after the answer when the client sent bytes while it waited (a pipelined request is not answered)', async () => {
    const { app, port, held } = await serve();
    apps.push(app);
    const client = rawClient(port);
    client.socket.write('GET /held HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => held.length === 1, 'the detach');
    client.socket.write('GET /plain HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((resolve) => setTimeout(resolve, 50));
    held[0]?.exchange.answer(200, {}, 'done');
    await client.closed;
    expect(client.received()).toContain('connection: close\r\n');
    expect(client.received().endsWith('done')).toBe(true);
    expect(client.received()).not.toContain('plain');
  });

  it('closes after the answer for HTTP/1.0 and for a client that asked to close', async () => {
    const { app, port, held } = await serve();
    apps.push(app);
    for (const request of ['GET /held HTTP/1.0\r\n\r\n', 'GET /held HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n']) {
      const client = rawClient(port);
      const before = held.length;
      client.socket.write(request);
      await until(() => held.length === before + 1, 'the detach');
      held.at(-1)?.exchange.answer(204, {}, '');
      await client.closed;
      expect(client.received()).toMatch(/^HTTP\/1\.1 204 No Content\r\n/);
      expect(client.received()).toContain('connection: close\r\n');
    }
  });

  it('raises `gone` when the client leaves while it waits', async () => {
    const { app, port, held } = await serve();
    apps.push(app);
    const client = rawClient(port);
    client.socket.write('GET /held HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => held.length === 1, 'the detach');
    expect(held[0]?.exchange.gone.raised).toBe(false);
    client.socket.end();
    await until(() => held[0]?.exchange.gone.raised === true, 'gone');
    // Answering a connection that is gone writes nothing and does not throw.
    held[0]?.exchange.answer(200, {}, 'late');
  });

  it('closes the connection after the answer when the server is closing, and the server then finishes closing', async () => {
    const { app, port, held } = await serve();
    const client = rawClient(port);
    client.socket.write('GET /held HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => held.length === 1, 'the detach');
    const closed = app.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    held[0]?.exchange.answer(200, {}, 'bye');
    await client.closed;
    expect(client.received()).toContain('connection: close\r\n');
    await closed;
  });

  it('rejects a header value that would split the response', async () => {
    const { app, port, held } = await serve();
    apps.push(app);
    const client = rawClient(port);
    client.socket.write('GET /held HTTP/1.1\r\nHost: x\r\n\r\n');
    await until(() => held.length === 1, 'the detach');
    expect(() => held[0]?.exchange.answer(200, { 'X-Bad': 'a\r\nInjected: 1' }, '')).toThrow();
    client.socket.destroy();
  });
});
