/**
 * The Node HTTP floor: a bare node:http server that answers `GET /<n>` with a JSON body of
 * exactly n bytes and the headers tempinbox's API sends, and `GET /304` with a 304 and an ETag. Prints `{"msg":"listening","port":N}`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Bodies by size, built once: the floor does no work per request beyond writing. */
const bodies = new Map<number, Buffer>();

function bodyOf(bytes: number): Buffer {
  let body = bodies.get(bytes);
  if (body === undefined) {
    const filler = Math.max(0, bytes - '{"f":""}'.length);
    body = Buffer.from(`{"f":"${'x'.repeat(filler)}"}`.slice(0, Math.max(bytes, 0)));
    bodies.set(bytes, body);
  }
  return body;
}

/** What the floor answers `GET /304` with: a 304 and an ETag of the service's length. */
const NOT_MODIFIED_ETAG = `"${'x'.repeat(22)}"`;

const server = createServer((request, response) => {
  if (request.url === '/304') {
    response.writeHead(304, { 'cache-control': 'no-store', etag: NOT_MODIFIED_ETAG });
    response.end();
    return;
  }
  const bytes = Number((request.url ?? '/').slice(1).split('?')[0]) || 0;
  const body = bodyOf(bytes);
  response.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'content-length': body.length,
  });
  response.end(body);
});
server.keepAliveTimeout = 72_000;
server.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ msg: 'listening', port: (server.address() as AddressInfo).port }));
});
process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
