import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../domain/errors.js';
import { isId } from '../../domain/ids.js';
import { consumePollBudget, requireSession, type HttpDeps } from '../http-deps.js';
import { presentMessage } from '../presenters.js';
import type { EventsQuery, InboxParams } from '../schemas/inbox-schemas.js';
import { boundedWriter, SSE_PING, sseEvent } from '../sse-writer.js';

/**
 * GET /api/inbox/:username/events: the inbox as server-sent events (docs/api.md "Event
 * stream"). Same cookie, ownership and path forms as check; counts once against the poll
 * budget and holds one slot of the held-request caps while open. The wire format is written
 * here (sse-writer.ts): a few lines, with our own send-buffer bound.
 *
 * Once the stream is open the reply is hijacked and events are written straight to the
 * response: a body piped through Fastify's send path kept a PassThrough with its pipe and
 * end-of-stream listeners alive per client. With the single timer of follow(), this took a
 * held stream from 21 to 14 KiB of heap (docs/scaling.md "Live mail"). The headers set so
 * far (security, rate limits) are written with the stream's own.
 */
export function inboxEventsHandler(deps: HttpDeps) {
  return async (request: FastifyRequest<{ Params: InboxParams; Querystring: EventsQuery }>, reply: FastifyReply) => {
    const session = await requireSession(deps, request, reply);
    await consumePollBudget(deps, request, reply, session.id);
    const header = request.headers['last-event-id'];
    const since = (typeof header === 'string' && header.trim() !== '' ? header.trim() : undefined) ?? request.query.since;
    if (since !== undefined && !isId(since)) throw new AppError('invalid_request', 'Last-Event-ID and since must be a message id.');
    const { inbox, hold } = await deps.live.openStream(session, request.params.username, request.ip);

    const response = reply.raw;
    const gone = new AbortController();
    const drop = (reason: string) => {
      if (gone.signal.aborted) return;
      request.log.info({ reason }, 'event stream dropped');
      gone.abort();
      response.destroy();
    };
    // The client left (or the socket failed): stop following.
    response.on('close', () => gone.abort());
    const write = boundedWriter(response, drop);
    const sink = {
      closed: gone.signal,
      message: (message: Parameters<typeof presentMessage>[0]) => write(sseEvent('message', JSON.stringify(presentMessage(message)), message.id)),
      deleted: (messageId: string) => write(sseEvent('deleted', JSON.stringify({ id: messageId }))),
      expired: () => write(sseEvent('expired', '{}')),
      ping: () => write(SSE_PING),
    };
    reply
      .type('text/event-stream; charset=utf-8')
      .header('Cache-Control', 'no-store')
      // Proxies (nginx) must pass each event on at once instead of buffering the body.
      .header('X-Accel-Buffering', 'no');
    reply.hijack();
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) response.setHeader(name, value);
    response.writeHead(200);
    // The first bytes go out at once, so the client knows the stream is open.
    void write(': open\n\n');
    void deps.live
      .follow(inbox, since, sink, hold)
      .catch((error: unknown) => request.log.warn({ err: error }, 'event stream ended by an error; the client reconnects'))
      .finally(() => {
        hold.release();
        if (!response.destroyed) response.end();
      });
  };
}
