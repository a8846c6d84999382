import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../domain/errors.js';
import { isId } from '../../domain/ids.js';
import type { MessageView } from '../../domain/types.js';
import { consumePollBudget, requireSession, type HttpDeps } from '../http-deps.js';
import { ListingJsonCache } from '../listing-json-cache.js';
import { messageJson } from '../presenters.js';
import type { EventsQuery, InboxParams } from '../schemas/inbox-schemas.js';
import { sseEvent, writeWhenDrained } from '../sse-writer.js';
import { EventFrames, PING_FRAME } from '../event-frames.js';
import { readSessionToken, sessionCookieHeader } from '../session-cookie.js';
import { ClientGone } from '../../services/client-gone.js';
import type { Hold } from '../../services/held-requests.js';
import type { StreamSink } from '../../services/live-mail-service.js';

/** The route pattern metrics count event streams under. */
export const EVENTS_ROUTE = '/api/inbox/:username/events';

/**
 * GET /api/inbox/:username/events: the inbox as server-sent events (docs/api.md "Event
 * stream"). Same cookie, ownership and path forms as check; counts once against the poll
 * budget and holds one slot of the held-request caps while open. The wire format is written
 * here (sse-writer.ts): a few lines, with our own bound on what waits for a slow client.
 *
 * Once the stream is open the reply is hijacked: the headers set so far (security, rate
 * limits, the renewed session cookie) are written with the stream's own, and events go to
 * node:http's response, which frames them as chunks.
 */
export function inboxEventsHandler(deps: HttpDeps) {
  // One per server: the streams of one inbox share their reads and each message's JSON
  // (kept by id, bounded: docs/architecture.md "Serialise once") and its encoded event.
  const json = messageJson(new ListingJsonCache());
  const frames = new EventFrames(json);
  return async (request: FastifyRequest<{ Params: InboxParams; Querystring: EventsQuery }>, reply: FastifyReply) => {
    const session = await requireSession(deps, request, reply);
    await consumePollBudget(deps, request, reply, session.id);
    const header = request.headers['last-event-id'];
    const since = (typeof header === 'string' && header.trim() !== '' ? header.trim() : undefined) ?? request.query.since;
    if (since !== undefined && !isId(since)) throw new AppError('invalid_request', 'Last-Event-ID and since must be a message id.');
    const { inbox, hold } = await deps.live.openStream(session, request.params.username, request.ip);

    const startedAt = performance.now() - reply.elapsedTime;
    reply.hijack();
    const response = reply.raw;
    // Every header goes to writeHead at once, none through setHeader: node:http then keeps no
    // table of them for the life of the response (~1.2 KiB per held stream). Fastify's names
    // are lower case; ours are too, so that each replaces Fastify's of the same name.
    const headers: OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) headers[name] = value;
    // The cookie plugin writes Set-Cookie only for answers Fastify sends; a hijacked one gets it here.
    headers['set-cookie'] = sessionCookieHeader(request.server, readSessionToken(request) ?? '', deps.secureCookies);
    headers['content-type'] = 'text/event-stream; charset=utf-8';
    headers['cache-control'] = 'no-store';
    // Proxies (nginx) must pass each event on at once instead of buffering the body.
    headers['x-accel-buffering'] = 'no';
    // A stream owns its connection: nothing else is sent on it, and it closes with the stream.
    headers.connection = 'close';
    response.writeHead(200, headers);
    // node:http keeps the head it built for the life of the response, as the ~50 pieces it
    // was joined from (~2 KiB). Sent on its own, it is written as that one string, which V8
    // then flattens in place: one piece of its length is what the held stream keeps.
    response.flushHeaders();
    const stream = new HeldEventStream(response, { json, frames, log: request.log, hold, startedAt, report: deps.reportResponse });
    // The first bytes go out at once, so the client knows the stream is open.
    void stream.write(': open\n\n');
    void deps.live.follow(session, inbox, since, stream, hold).then(stream.onEnd, stream.onError);
  };
}

/** What a held stream needs besides its response (one per stream, kept for its life). */
interface HeldEventStreamParts {
  json: (message: MessageView) => string;
  frames: EventFrames;
  log: FastifyBaseLogger;
  hold: Hold;
  startedAt: number;
  report: HttpDeps['reportResponse'];
}

/**
 * One open event stream: the sink LiveMailService.follow writes to. Its state is fields and
 * its writers methods, so that a held stream is a few small objects (docs/scaling.md "Live
 * mail"). Each write waits until the client took the previous one (writeWhenDrained).
 */
class HeldEventStream implements StreamSink {
  readonly closed = new ClientGone();
  private readonly offShutdown: () => void;

  constructor(
    private readonly response: ServerResponse,
    private readonly parts: HeldEventStreamParts,
  ) {
    // The client left (or the socket failed): stop following. It may have left already.
    response.on('close', this.onClose);
    if (response.destroyed) this.closed.raise();
    this.offShutdown = parts.hold.onShutdown(this.onShutdown);
  }

  message(message: MessageView): Promise<void> {
    return writeWhenDrained(this.response, () => this.parts.frames.message(message), this.drop);
  }

  deleted(messageId: string): Promise<void> {
    return this.write(sseEvent('deleted', JSON.stringify({ id: messageId })));
  }

  expired(): Promise<void> {
    return this.write(sseEvent('expired', '{}'));
  }

  /** A keep-alive only for a stream whose client keeps up: one with bytes waiting needs none. */
  ping(): Promise<void> {
    if (!this.response.writableNeedDrain && !this.response.destroyed && !this.response.writableEnded) this.response.write(PING_FRAME);
    return Promise.resolve();
  }

  write(text: string): Promise<void> {
    return writeWhenDrained(this.response, () => text, this.drop);
  }

  /** A client too slow for its events is dropped; it reconnects with Last-Event-ID. */
  private readonly drop = (reason: string): void => {
    if (this.closed.raised) return;
    this.parts.log.info({ reason }, 'event stream dropped');
    this.closed.raise();
    this.response.destroy();
  };

  private readonly onClose = (): void => this.closed.raise();

  /**
   * The node stops: a client that is not taking its bytes would hold the shutdown until the
   * stall rule, so its connection is cut now; the others end with the follow (onEnd).
   */
  private readonly onShutdown = (): void => {
    if (this.response.writableNeedDrain || this.response.writableLength > 0) this.response.destroy();
  };

  /** The follow ended (the client left, the inbox expired or was lost, the node stops). */
  readonly onEnd = (): void => {
    const { hold, report, startedAt } = this.parts;
    hold.release();
    this.offShutdown();
    const { response } = this;
    if (!response.destroyed) response.end();
    // Fastify's onResponse hook never sees a hijacked reply: count it here.
    report?.('GET', EVENTS_ROUTE, 200, (performance.now() - startedAt) / 1000);
  };

  readonly onError = (error: unknown): void => {
    this.parts.log.warn({ err: error }, 'event stream ended by an error; the client reconnects');
    this.onEnd();
  };
}
