import { STATUS_CODES, validateHeaderName, validateHeaderValue, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ClientGone } from '../services/client-gone.js';
import { detachSocket } from './detach-stream.js';

/** Called with each answered exchange (metrics), as Fastify's onResponse hook would be. */
export type ReportResponse = (method: string, route: string, status: number, seconds: number) => void;

/**
 * A request that may wait long before its answer (a check with `wait`): while it waits, its
 * connection leaves node:http, and the answer is written straight to the socket
 * (docs/scaling.md "Live mail", "What a held wait costs").
 *
 * node:http keeps, for a request in progress, its parser (~10 KiB of native memory on Node
 * 24), the request and response objects and the per-connection state and listeners: ~11 KiB
 * of JS heap on top, held for the whole wait, and promoted to the old generation, where every
 * answered wait leaves it as garbage (10,000 long-polls answered at 1,000 a second grew the
 * heap by ~10 MB/s). Detached, a waiting request costs its socket and the wait's own objects.
 *
 * The answer carries the headers the request had gathered (security, rate limits, cookie)
 * plus its own. The connection then goes back to node:http for the next request (keep-alive,
 * as `server.emit('connection')` hands any socket to it), unless the client sent bytes while
 * it waited (pipelining), is HTTP/1.0, or the server is closing: then `Connection: close`.
 */
export class HeldExchange {
  /** Raised when the client leaves before its answer: the wait stops at once. */
  readonly gone = new ClientGone();
  /** Until the connection leaves node:http; dropped then, so that nothing keeps them alive. */
  private exchange: { request: FastifyRequest; reply: FastifyReply } | undefined;
  private readonly server: Server;
  private readonly method: string;
  private socket: Socket | undefined;
  private headers: Record<string, string | string[]> = {};
  /** False once the client sent anything while it waited: that connection cannot be reused. */
  private reusable: boolean;
  private readonly startedAt: number;
  /** Settles with the outcome of the first detach() (true: detached). */
  private readonly detachment: Promise<boolean>;
  private settleDetachment: (detached: boolean) => void = () => undefined;

  constructor(
    request: FastifyRequest,
    reply: FastifyReply,
    private readonly route: string,
    private readonly report: ReportResponse | undefined,
  ) {
    this.exchange = { request, reply };
    this.server = request.server.server;
    this.method = request.method;
    this.startedAt = performance.now() - reply.elapsedTime;
    // Keep-alive as node:http decides it: HTTP/1.1, and the client did not ask to close.
    this.reusable = request.raw.httpVersion === '1.1' && !/(^|,)\s*close\s*(,|$)/i.test(String(request.headers.connection ?? ''));
    this.detachment = new Promise((resolve) => (this.settleDetachment = resolve));
    const response = reply.raw;
    response.on('close', () => {
      if (!response.writableFinished && this.socket === undefined) this.gone.raise();
    });
  }

  /** Whether the connection left node:http (then only answer() may answer). */
  get detached(): boolean {
    return this.socket !== undefined;
  }

  /**
   * Takes the connection out of node:http for the wait (the first call only). Keeps it there
   * when that cannot be done (see detachSocket), or for anything but GET; then Fastify
   * answers as usual.
   */
  async detach(): Promise<void> {
    const exchange = this.exchange;
    if (exchange === undefined || this.socket !== undefined) return;
    const { request, reply } = exchange;
    let socket: Socket | undefined;
    if (request.method === 'GET' && !this.gone.raised) {
      // Taken before the hijack: what onRequest hooks and the handler set so far.
      const headers = reply.getHeaders();
      socket = await detachSocket(request.raw, reply.raw);
      if (socket !== undefined) {
        reply.hijack();
        this.exchange = undefined;
        this.socket = socket;
        for (const [name, value] of Object.entries(headers)) {
          if (value !== undefined) this.headers[name.toLowerCase()] = Array.isArray(value) ? value.map(String) : String(value);
        }
        socket.on('data', this.onData);
        socket.on('end', this.onEnd);
        socket.on('error', this.onEnd);
        socket.on('close', this.onClose);
      }
    }
    this.settleDetachment(socket !== undefined);
  }

  /**
   * Resolves to true once the connection has left node:http while `answer` is still due
   * (the handler must then return at once: Fastify keeps the request and reply of a pending
   * handler alive, and answer() is called when `answer` settles); to false when `answer`
   * settled first or the detach could not be done (Fastify answers).
   */
  settle(answer: Promise<unknown>): Promise<boolean> {
    // Whichever comes first settles `detachment`; the other is a no-op.
    answer.then(this.answerCame, this.answerCame);
    return this.detachment;
  }

  private readonly answerCame = (): void => this.settleDetachment(false);

  private readonly onData = (): void => {
    // Nothing may follow a request whose answer is still due: not parsed, and the connection
    // closes after the answer.
    this.reusable = false;
  };

  private readonly onEnd = (): void => {
    this.socket?.destroy();
  };

  private readonly onClose = (): void => {
    this.gone.raise();
  };

  /**
   * Writes the whole answer on the detached connection (with the headers gathered before the
   * wait, then `headers`), then hands the connection back to node:http or closes it.
   */
  answer(status: number, headers: Record<string, string>, body: string): void {
    const socket = this.socket;
    if (socket === undefined) throw new Error('HeldExchange.answer: the exchange was not detached');
    socket.off('data', this.onData);
    socket.off('end', this.onEnd);
    socket.off('error', this.onEnd);
    socket.off('close', this.onClose);
    if (socket.destroyed || !socket.writable) return;
    const { server } = this;
    const keepAlive = this.reusable && server.listening;
    const all = {
      ...this.headers,
      ...Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value])),
      'content-length': String(Buffer.byteLength(body)),
      date: new Date().toUTCString(),
      connection: keepAlive ? 'keep-alive' : 'close',
    };
    let head: string;
    try {
      head = responseHead(status, all);
    } catch (error) {
      // A header of ours that node:http would refuse too: a bug, but never a split response.
      socket.destroy();
      throw error;
    }
    socket.write(head + body);
    this.report?.(this.method, this.route, status, (performance.now() - this.startedAt) / 1000);
    if (keepAlive) {
      // node:http takes the connection as a new one: a parser from its pool, its listeners and
      // timeouts; the next request is read from here.
      server.emit('connection', socket);
      // And the idle bound node:http puts on a connection after each answer (it would
      // otherwise wait for a next request forever). Activity resets it; the longest quiet
      // request, a wait that stays on node:http (HEAD, at most MAX_WAIT_SECONDS), is shorter.
      if (server.keepAliveTimeout > 0) socket.setTimeout(server.keepAliveTimeout);
    } else socket.end();
  }
}

/** An HTTP/1.1 status line and header block; names and values checked as node:http does. */
function responseHead(status: number, headers: Record<string, string | string[]>): string {
  let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Unknown'}\r\n`;
  for (const [name, value] of Object.entries(headers)) {
    validateHeaderName(name);
    for (const one of Array.isArray(value) ? value : [value]) {
      validateHeaderValue(name, one);
      head += `${name}: ${one}\r\n`;
    }
  }
  return `${head}\r\n`;
}
