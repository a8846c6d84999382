import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../domain/errors.js';
import { isId } from '../../domain/ids.js';
import type { MessageView } from '../../domain/types.js';
import { consumePollBudget, requireSession, type HttpDeps } from '../http-deps.js';
import { ListingJsonCache } from '../listing-json-cache.js';
import { checkJsonWriter } from '../presenters.js';
import type { EventsQuery, InboxParams } from '../schemas/inbox-schemas.js';
import { chunkFrame, LAST_CHUNK, writeHeadAndDetach } from '../detach-stream.js';
import { boundedWriter, SSE_PING, sseEvent } from '../sse-writer.js';
import { EventFrames, PING_FRAME } from '../event-frames.js';

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

    const log = request.log;
    const startedAt = performance.now() - reply.elapsedTime;
    const gone = new AbortController();
    reply
      .type('text/event-stream; charset=utf-8')
      .header('Cache-Control', 'no-store')
      // Proxies (nginx) must pass each event on at once instead of buffering the body.
      .header('X-Accel-Buffering', 'no');
    reply.hijack();
    const response = reply.raw;
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) response.setHeader(name, value);
    // From here on no closure may hold `request`, `reply` or `response` when the stream left
    // node:http: that is what makes a held stream small (detach-stream.ts).
    const socket = await writeHeadAndDetach(request.raw, response, 200);
    const body = socket ?? response;
    const drop = (reason: string) => {
      if (gone.signal.aborted) return;
      log.info({ reason }, 'event stream dropped');
      gone.abort();
      body.destroy();
    };
    // The client left (or the socket failed): stop following. It may have left already.
    body.on('close', () => gone.abort());
    if (body.destroyed) gone.abort();
    if (socket !== undefined) {
      // What the client sends after its request is read and dropped; its end or an error closes.
      socket.on('data', discard);
      socket.on('end', () => socket.destroy());
      socket.on('error', () => socket.destroy());
    }
    const writeBounded = boundedWriter(body, drop);
    const write = socket === undefined ? writeBounded : (text: string) => writeBounded(chunkFrame(text));
    // A detached stream writes the bytes every stream shares: a message's frame, the ping.
    const sink = {
      closed: gone.signal,
      message: (message: MessageView) => (socket === undefined ? write(sseEvent('message', json(message), message.id)) : writeBounded(frames.message(message))),
      deleted: (messageId: string) => write(sseEvent('deleted', JSON.stringify({ id: messageId }))),
      expired: () => write(sseEvent('expired', '{}')),
      ping: () => (socket === undefined ? write(SSE_PING) : writeBounded(PING_FRAME)),
    };
    // The first bytes go out at once, so the client knows the stream is open.
    void write(': open\n\n');
    const report = deps.reportResponse;
    void deps.live
      .follow(inbox, since, sink, hold)
      .catch((error: unknown) => log.warn({ err: error }, 'event stream ended by an error; the client reconnects'))
      .finally(() => {
        hold.release();
        if (socket === undefined) {
          if (!body.destroyed) body.end();
          return;
        }
        if (!socket.destroyed) socket.end(LAST_CHUNK);
        // Fastify's onResponse hook never sees a detached stream: count it here.
        report?.('GET', EVENTS_ROUTE, 200, (performance.now() - startedAt) / 1000);
      });
  };
}
