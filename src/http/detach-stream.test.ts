import { createServer, get, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CAN_DETACH, chunkFrame, LAST_CHUNK, writeHeadAndDetach } from './detach-stream.js';

/** A node:http server whose one route writes its headers, detaches and hands the outcome to the test. */
async function serve(onDetached: (socket: Socket | undefined, request: IncomingMessage) => void): Promise<{ server: Server; port: number }> {
  const server = createServer(async (request, response) => {
    response.setHeader('Content-Type', 'text/event-stream');
    const socket = await writeHeadAndDetach(request, response, 200);
    onDetached(socket, request);
    // Not detached: node:http still owns the exchange, and ends it.
    if (socket === undefined) response.end('kept');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

/** Reads a whole response with node's own client (which parses the chunked framing). */
function fetchBody(port: number, method = 'GET'): Promise<{ status: number; headers: IncomingMessage['headers']; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path: '/' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

describe('writeHeadAndDetach', () => {
  it('is available on this Node (it reaches node:http through _http_common)', () => {
    // If a Node release removes freeParser, streams silently stay on node:http and cost ~10 KiB
    // more each (docs/scaling.md "Live mail"): this test says so first.
    expect(CAN_DETACH).toBe(true);
  });

  it('frames chunks by their size in octets, not characters', () => {
    expect(chunkFrame('abc')).toBe('3\r\nabc\r\n');
    expect(chunkFrame('é'.repeat(8))).toBe('10\r\néééééééé\r\n');
    expect(LAST_CHUNK).toBe('0\r\n\r\n');
  });

  it('hands over a socket node:http no longer parses, and a client reads the chunked body to its end', async () => {
    let detached: Socket | undefined;
    let listening: number[] = [];
    const { server, port } = await serve((socket) => {
      detached = socket;
      if (socket === undefined) return;
      listening = ['data', 'end', 'error', 'close', 'drain', 'timeout'].map((event) => socket.listenerCount(event));
      socket.write(chunkFrame('data: one\n\n'));
      setTimeout(() => socket.end(chunkFrame('data: twö\n\n') + LAST_CHUNK), 20);
    });
    servers.push(server);
    const response = await fetchBody(port);
    expect(detached).toBeDefined();
    expect((detached as Socket & { parser?: unknown }).parser).toBeNull();
    // None of node:http's listeners is left to keep its per-connection state alive.
    expect(listening).toEqual([0, 0, 0, 0, 0, 0]);
    expect(response.status).toBe(200);
    expect(response.headers.connection).toBe('close');
    expect(response.headers['transfer-encoding']).toBe('chunked');
    expect(response.headers['content-type']).toBe('text/event-stream');
    expect(response.body).toBe('data: one\n\ndata: twö\n\n');
  });

  it('lets node:http drop the connection from its own list: the server closes once the stream ends', async () => {
    let detached: Socket | undefined;
    const { server, port } = await serve((socket) => (detached = socket));
    const client = connect(port, '127.0.0.1');
    client.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    client.on('data', () => undefined);
    await new Promise((resolve) => client.once('data', resolve));
    expect(detached).toBeDefined();
    // closeAllConnections() only reaches what node:http still tracks: the stream survives it …
    server.closeAllConnections();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(detached?.destroyed).toBe(false);
    // … and close() completes when the stream's owner ends it.
    const closed = new Promise((resolve) => server.close(resolve));
    detached?.end(LAST_CHUNK);
    await closed;
    client.destroy();
  });

  it('sees the client leave: the socket closes when the client ends its side', async () => {
    const closed: Promise<void>[] = [];
    const { server, port } = await serve((socket) => {
      if (socket === undefined) return;
      socket.on('end', () => socket.destroy());
      closed.push(new Promise((resolve) => socket.on('close', () => resolve())));
    });
    servers.push(server);
    const client = connect(port, '127.0.0.1');
    client.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await new Promise((resolve) => client.once('data', resolve));
    // Bytes after the request (here a pipelined request) are read and dropped, not parsed.
    client.write('GET /again HTTP/1.1\r\nHost: x\r\n\r\n');
    client.end();
    await closed[0];
    expect(closed).toHaveLength(1);
  });

  it('keeps a HEAD request and an HTTP/1.0 client on node:http (no body, or no chunked framing)', async () => {
    const outcomes: Array<{ method: string | undefined; detached: boolean }> = [];
    const { server, port } = await serve((socket, request) => {
      outcomes.push({ method: request.method, detached: socket !== undefined });
      socket?.end(LAST_CHUNK);
    });
    servers.push(server);
    const head = await fetchBody(port, 'HEAD');
    expect(head.status).toBe(200);
    // An HTTP/1.0 request: node:http answers close-delimited, so the caller keeps its response.
    const raw = connect(port, '127.0.0.1');
    raw.write('GET / HTTP/1.0\r\n\r\n');
    const first = await new Promise<string>((resolve) => raw.once('data', (data: Buffer) => resolve(data.toString())));
    expect(first).toMatch(/^HTTP\/1\.1 200/);
    expect(first).not.toMatch(/transfer-encoding/i);
    raw.destroy();
    expect(outcomes).toEqual([
      { method: 'HEAD', detached: false },
      { method: 'GET', detached: false },
    ]);
  });

  it('serves the next connection normally after a detach (the parser went back to its pool clean)', async () => {
    let count = 0;
    const { server, port } = await serve((socket) => {
      count += 1;
      socket?.end(chunkFrame(`n=${count}`) + LAST_CHUNK);
    });
    servers.push(server);
    const bodies: string[] = [];
    for (let i = 0; i < 5; i += 1) bodies.push((await fetchBody(port)).body);
    expect(bodies).toEqual(['n=1', 'n=2', 'n=3', 'n=4', 'n=5']);
    // And a plain request on the same server still works end to end.
    const plain = await new Promise<number>((resolve) => get({ host: '127.0.0.1', port, path: '/' }, (res) => resolve(res.statusCode ?? 0)).end());
    expect(plain).toBe(200);
  });
});
