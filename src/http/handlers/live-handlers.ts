import type { Socket } from 'node:net';
import type { Writable } from 'node:stream';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../domain/errors.js';
import { isId } from '../../domain/ids.js';
import type { MessageView } from '../../domain/types.js';
import { consumePollBudget, requireSession, type HttpDeps } from '../http-deps.js';
import { ListingJsonCache } from '../listing-json-cache.js';
import { checkJsonWriter } from '../presenters.js';
import type { EventsQuery, InboxParams } from '../schemas/inbox-schemas.js';
import { chunkFrame, LAST_CHUNK, writeHeadAndDetach } from '../detach-stream.js';
import { SSE_PING, sseEvent, writeBounded } from '../sse-writer.js';
import { EventFrames, PING_FRAME } from '../event-frames.js';
import type { ReportResponse } from '../held-exchange.js';
import { ClientGone } from '../../services/client-gone.js';
import type { Hold } from '../../services/held-requests.js';
import type { StreamSink } from '../../services/live-mail-service.js';

/** The route pattern metrics count event streams under. */
export const EVENTS_ROUTE = '/api/inbox/:username/events';

const discard = () => undefined;

/**
 * GET /api/inbox/:username/events: the inbox as server-sent events (docs/api.md "Event
 * stream"). Same cookie, ownership and path forms as check; counts once against the poll
 * budget and holds one slot of the held-request caps while open. The wire format is written
 * here (sse-writer.ts): a few lines, with our own send-buffer bound.
 *
 * Once the stream is open the reply is hijacked, the headers set so far (security, rate
 * limits) are written with the stream's own, and the connection leaves node:http
 * (detach-stream.ts): events go straight to the socket in chunked framing. A body piped
 * through Fastify's send path kept a PassThrough with its listeners alive per client, and
 * node:http its whole exchange; what a held stream costs is in docs/scaling.md "Live mail".
 */
export function inboxEventsHandler(deps: HttpDeps) {
  // One per server: the streams of one inbox share their reads and each message's JSON
  // (kept by id, bounded: docs/architecture.md "Serialise once").
  const { json } = checkJsonWriter(new ListingJsonCache());
  // …and each message's bytes on a detached stream's wire (event-frames.ts).
  const frames = new EventFrames(json);
  return async (request: FastifyRequest<{ Params: InboxParams; Querystring: EventsQuery }>, reply: FastifyReply) => {
    const session = await requireSession(deps, request, reply);
    await consumePollBudget(deps, request, reply, session.id);
    const header = request.headers['last-event-id'];
    const since = (typeof header === 'string' && header.trim() !== '' ? header.trim() : undefined) ?? request.query.since;
    if (since !== undefined && !isId(since)) throw new AppError('invalid_request', 'Last-Event-ID and since must be a message id.');
    const { inbox, hold } = await deps.live.openStream(session, request.params.username, request.ip);

    reply
      .type('text/event-stream; charset=utf-8')
      .header('Cache-Control', 'no-store')
      // Proxies (nginx) must pass each event on at once instead of buffering the body.
      .header('X-Accel-Buffering', 'no');
    const startedAt = performance.now() - reply.elapsedTime;
    const log = request.log;
    reply.hijack();
    const response = reply.raw;
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) response.setHeader(name, value);
    // From here on nothing may hold `request`, `reply` or `response` when the stream left
    // node:http: that is what makes a held stream small (detach-stream.ts).
    const socket = await writeHeadAndDetach(request.raw, response, 200);
    const stream = new HeldEventStream(socket ?? response, socket !== undefined, { json, frames, log, hold, startedAt, report: deps.reportResponse });
    // The first bytes go out at once, so the client knows the stream is open.
    void stream.write(': open\n\n');
    void deps.live.follow(inbox, since, stream, hold).then(stream.onEnd, stream.onError);
  };
}

/** What a held stream needs besides its connection (one per stream, kept for its life). */
interface HeldEventStreamParts {
  json: (message: MessageView) => string;
  frames: EventFrames;
  log: FastifyBaseLogger;
  hold: Hold;
  startedAt: number;
  report: ReportResponse | undefined;
}

/**
 * One open event stream: the sink LiveMailService.follow writes to. Its state is fields and
 * its writers methods, so that a held stream is a few small objects (docs/scaling.md "Live
 * mail"): its own functions are only the follow's two end callbacks, the close listener and
 * the drop callback its writes take. `body` is the socket once the stream left node:http (events then go out in
 * chunked framing), else node:http's response.
 */
class HeldEventStream implements StreamSink {
  readonly closed = new ClientGone();

  constructor(
    private readonly body: Writable,
    private readonly detached: boolean,
    private readonly parts: HeldEventStreamParts,
  ) {
    // The client left (or the socket failed): stop following. It may have left already.
    body.on('close', this.onClose);
    if (body.destroyed) this.closed.raise();
    if (detached) {
      // What the client sends after its request is read and dropped; its end or an error closes.
      body.on('data', discard);
      body.on('end', destroyEmitter);
      body.on('error', destroyEmitter);
    }
  }

  /** A detached stream writes the bytes every stream shares: a message's frame, the ping. */
  message(message: MessageView): Promise<void> {
    const { json, frames } = this.parts;
    return this.detached ? this.writeBytes(frames.message(message)) : this.write(sseEvent('message', json(message), message.id));
  }

  deleted(messageId: string): Promise<void> {
    return this.write(sseEvent('deleted', JSON.stringify({ id: messageId })));
  }

  expired(): Promise<void> {
    return this.write(sseEvent('expired', '{}'));
  }

  ping(): Promise<void> {
    return this.detached ? this.writeBytes(PING_FRAME) : this.write(SSE_PING);
  }

  write(text: string): Promise<void> {
    return this.writeBytes(this.detached ? chunkFrame(text) : text);
  }

  private writeBytes(chunk: string | Uint8Array): Promise<void> {
    return writeBounded(this.body, chunk, this.drop);
  }

  /** A client too slow for its events is dropped; it reconnects with Last-Event-ID. */
  private readonly drop = (reason: string): void => {
    if (this.closed.raised) return;
    this.parts.log.info({ reason }, 'event stream dropped');
    this.closed.raise();
    this.body.destroy();
  };

  private readonly onClose = (): void => this.closed.raise();

  /** The follow ended (the client left, the inbox expired, the node stops). */
  readonly onEnd = (): void => {
    const { hold, report, startedAt } = this.parts;
    hold.release();
    const { body } = this;
    if (!this.detached) {
      if (!body.destroyed) body.end();
      return;
    }
    if (!body.destroyed) body.end(LAST_CHUNK);
    // Fastify's onResponse hook never sees a detached stream: count it here.
    report?.('GET', EVENTS_ROUTE, 200, (performance.now() - startedAt) / 1000);
  };

  readonly onError = (error: unknown): void => {
    this.parts.log.warn({ err: error }, 'event stream ended by an error; the client reconnects');
    this.onEnd();
  };
}

/** An `end` or `error` listener of a detached stream's socket (called with the socket as `this`). */
function destroyEmitter(this: Socket): void {
  this.destroy();
}
