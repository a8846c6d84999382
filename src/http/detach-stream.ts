import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';

/**
 * Takes a long-lived response (an event stream) out of node:http once its headers are on the
 * wire, so that a held stream costs a socket and our own few objects instead of a whole HTTP
 * exchange (docs/scaling.md "Live mail", "What a held stream costs").
 *
 * node:http keeps, for every connection with a response in progress, its parser (native
 * memory and a pooled JS object), the request and response objects, their stream states,
 * the rendered header string and the listeners it put on the socket: measured on Node 24,
 * 17.3 KiB of RSS per held connection against 5.7 KiB once detached and 2.5 KiB for a bare
 * socket (bench/held-connection-cost.ts, 10,000 connections). node:http itself lets go of a
 * connection this way when it hands it to an `upgrade` listener; there is no public call for
 * doing so mid-response, so this uses the same steps: take the socket from the response, remove the
 * server's listeners from it, and give the parser back with `freeParser` from the legacy
 * `_http_common` module (present on Node 22 and 24; a test fails the day it goes, and without
 * it streams simply stay on node:http).
 *
 * After this the connection is ours: the body is written in chunked framing by
 * `chunkFrame`, the response said `Connection: close`, and the stream ends with the last
 * chunk and the socket's end.
 */

/** node:http's own parser release, if this Node still exposes it. */
const freeParser = loadFreeParser();

function loadFreeParser(): ((parser: unknown, request: unknown, socket: unknown) => void) | undefined {
  try {
    const common = createRequire(import.meta.url)('_http_common') as { freeParser?: unknown };
    return typeof common.freeParser === 'function' ? (common.freeParser as (parser: unknown, request: unknown, socket: unknown) => void) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether streams can leave node:http on this Node (exported for the test that watches it). */
export const CAN_DETACH = freeParser !== undefined;

/**
 * The events node:http's server listens to on a connection (`connectionListenerInternal` in
 * lib/_http_server.js: data, end, error, close, drain, timeout, resume, pause). Removed, they
 * no longer reach the server's per-connection state, which then holds nothing alive.
 */
const HTTP_SOCKET_EVENTS = ['data', 'end', 'error', 'close', 'drain', 'timeout', 'resume', 'pause'] as const;

/** The last chunk of a chunked body (RFC 9112 §7.1): an empty chunk and no trailers. */
export const LAST_CHUNK = '0\r\n\r\n';

/** One chunk of a chunked body (RFC 9112 §7.1): its size in hex octets, the data, CRLF. */
export function chunkFrame(data: string): string {
  return `${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n`;
}

/**
 * Writes the response's status line and headers (with `Connection: close`) and resolves to
 * its socket, detached from node:http, or to `undefined` when that cannot be done safely (a
 * HEAD request, a body that is not chunked, a socket already gone, a Node without
 * freeParser): then the headers went out the ordinary way and the caller keeps writing to
 * `response`, which may already be destroyed (the caller checks).
 *
 * The socket comes back flowing, with no listeners: the caller adds its own for `close`,
 * `end` and `error`, and discards anything the client sends (an event-stream client sends
 * nothing after its request).
 */
export async function writeHeadAndDetach(request: IncomingMessage, response: ServerResponse, status: number): Promise<Socket | undefined> {
  const detachable = freeParser !== undefined && request.method === 'GET';
  // Nothing can follow this response on the connection once node:http no longer parses it.
  if (detachable) response.setHeader('Connection', 'close');
  response.writeHead(status);
  response.flushHeaders();
  // `chunkedEncoding`: node:http chose chunked framing (HTTP/1.1, no Content-Length); an
  // HTTP/1.0 client gets a close-delimited body, which node:http keeps writing for us.
  if (!detachable || !response.chunkedEncoding) return undefined;
  return detachSocket(request, response);
}

/**
 * Takes the connection of a request out of node:http (the steps above, without writing
 * anything): resolves to the socket, flowing and without listeners, or to `undefined` when it
 * cannot be done (a socket already gone, a Node without freeParser): then node:http keeps the
 * exchange and `response` answers as usual. The caller owns the socket from then on.
 */
export async function detachSocket(request: IncomingMessage, response: ServerResponse): Promise<Socket | undefined> {
  if (freeParser === undefined) return undefined;
  // node:http may still be inside the parser call that emitted this request: when that call
  // completes the message it files the connection as idle again, after we let go of it (seen
  // on Node 22, where closeAllConnections() then met a connection without a socket). Its own
  // upgrade path detaches after the call returns; so do we.
  await new Promise<void>((resolve) => setImmediate(resolve));
  const socket = response.socket;
  const parser = (socket as (Socket & { parser?: unknown }) | null)?.parser;
  if (socket === null || socket.destroyed || parser === null || parser === undefined) return undefined;
  response.detachSocket(socket);
  for (const event of HTTP_SOCKET_EVENTS) socket.removeAllListeners(event);
  // node:http's idle timeout is off for a held exchange; its owner bounds it.
  socket.setTimeout(0);
  freeParser(parser, request, socket);
  socket.resume();
  return socket;
}
