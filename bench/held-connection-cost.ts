/**
 * `npx tsx bench/held-connection-cost.ts [--clients N]`: what one held connection costs a
 * Node server, with nothing of tempinbox around it (docs/decisions/0030-held-clients-on-node-http.md).
 * For each way of holding it, a fresh child server takes N loopback connections, each sending
 * one GET and getting a response that never ends (or, for `node:http idle`, has ended):
 *
 * - `socket`: a bare net.Server writing the headers itself (the floor);
 * - `node:http`: http.createServer with writeHead and one write, the response kept open (what
 *   an event stream or a held wait of the service is);
 * - `node:http idle`: the same server with the response ended and the connection kept alive
 *   (node:http's own per-connection state: its parser and listeners).
 *
 * Printed per connection: the server's RSS growth, and its JS heap growth after two forced
 * garbage collections (what stays alive). Loopback only; clients come from 127.0.x.y so
 * that no one address runs out of ports.
 */
import { fork } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';
import { connect, createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';

const MODES = ['socket', 'node:http', 'node:http idle'] as const;
type Mode = (typeof MODES)[number];
/** Connections opened before a short pause, so the listen backlog (511) never overflows. */
const OPEN_BATCH = 500;
/** Settling time after the last connection, before the server is measured. */
const SETTLE_MS = 3000;

interface Reading {
  rss: number;
  heapUsed: number;
  held: number;
}

function readMemory(held: number): Reading {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  const usage = process.memoryUsage();
  return { rss: usage.rss, heapUsed: usage.heapUsed, held };
}

/** The child: one server of `mode`, answering the parent's "measure" messages. */
function runServer(mode: Mode): void {
  const held: unknown[] = [];
  const head = 'HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n';
  const server =
    mode === 'socket'
      ? createNetServer((socket) =>
          socket.once('data', () => {
            socket.write(`${head}9\r\n: open\n\n\r\n`);
            held.push(socket);
          }),
        )
      : createHttpServer({ keepAliveTimeout: 600_000 }, (_request, response) => {
          response.setHeader('Content-Type', 'text/event-stream');
          if (mode === 'node:http idle') {
            response.end('ok');
            held.push(1);
            return;
          }
          response.writeHead(200);
          response.write(': open\n\n');
          held.push(response);
        });
  server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as AddressInfo).port }));
  process.on('message', () => process.send?.(readMemory(held.length)));
}

async function measure(mode: Mode, clients: number): Promise<string> {
  const child = fork(import.meta.filename, ['--serve', mode], { execArgv: ['--import', 'tsx', '--expose-gc'] });
  try {
    const next = <T>() => new Promise<T>((resolve) => child.once('message', (message) => resolve(message as T)));
    const { port } = await next<{ port: number }>();
    const ask = () => {
      const reply = next<Reading>();
      child.send('measure');
      return reply;
    };
    const before = await ask();
    const sockets: Socket[] = [];
    for (let i = 0; i < clients; i += 1) {
      const localAddress = `127.0.${1 + (i % 200)}.${1 + (Math.floor(i / 200) % 250)}`;
      const socket = connect({ port, host: '127.0.0.1', localAddress });
      socket.on('error', () => undefined);
      socket.on('data', () => undefined);
      socket.write('GET /events HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n');
      sockets.push(socket);
      if (i % OPEN_BATCH === OPEN_BATCH - 1) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const after = await ask();
    for (const socket of sockets) socket.destroy();
    const kib = (bytes: number) => (bytes / clients / 1024).toFixed(1);
    return `${mode.padEnd(9)}  ${after.held} held: RSS ${kib(after.rss - before.rss)} KiB, live heap ${kib(after.heapUsed - before.heapUsed)} KiB per connection`;
  } finally {
    child.kill();
  }
}

const argv = process.argv.slice(2);
if (argv[0] === '--serve') runServer(argv[1] as Mode);
else {
  const at = argv.indexOf('--clients');
  const clients = at === -1 ? 10_000 : Number(argv[at + 1]);
  console.log(`node ${process.version}, ${clients} held connections per server`);
  for (const mode of MODES) console.log(await measure(mode, clients));
}
