import type { FastifyReply, FastifyRequest } from 'fastify';
import { CHECK_MAX_LIMIT } from '../../domain/check-limits.js';
import { CREATE_PER_ADDRESS } from '../../domain/fair-use.js';
import { admitSession, consumePollBudget, requireSession, type HttpDeps } from '../http-deps.js';
import { ifNoneMatchHits } from '../../domain/check-etag.js';
import { ListingJsonCache } from '../listing-json-cache.js';
import { presentInbox, presentInboxSummary, renderCheckPage } from '../presenters.js';
import type { CheckQuery, CreateQuery, InboxParams } from '../schemas/inbox-schemas.js';
import { ClientGone } from '../../services/client-gone.js';
import { readSessionToken, setSessionCookie } from '../session-cookie.js';

/** The content type of answers the handlers serialise themselves. */
const JSON_TYPE = 'application/json; charset=utf-8';

/** GET /api/create */
export function createInboxHandler(deps: HttpDeps) {
  return async (request: FastifyRequest<{ Querystring: CreateQuery }>, reply: FastifyReply) => {
    const token = readSessionToken(request);
    let session = await deps.sessions.resolve(token);
    if (session !== null && token !== undefined) {
      setSessionCookie(reply, token, deps.secureCookies);
    } else {
      // Refuse before making a session: once the address's budget is spent, a flood of
      // cookie-less calls stores nothing.
      await deps.fairUse.assertNotExhausted(CREATE_PER_ADDRESS, request.ip);
      if (deps.inboxes.createsWithSession(request.query)) {
        // The common case: the session and its inbox in one transaction; the cookie once both exist.
        const fresh = deps.sessions.newSession();
        const { inbox } = await deps.inboxes.createWithSession(fresh.session, request.query, request.ip);
        setSessionCookie(reply, fresh.newToken, deps.secureCookies);
        return presentInbox(inbox);
      }
      const created = await deps.sessions.create();
      session = created.session;
      setSessionCookie(reply, created.newToken, deps.secureCookies);
    }
    const { inbox } = await deps.inboxes.create(session, request.query, request.ip);
    return presentInbox(inbox);
  };
}

/** The route pattern metrics count checks under. */
export const CHECK_ROUTE = '/api/check/:username';

/** GET /api/check/:username */
export function checkInboxHandler(deps: HttpDeps) {
  // One per server: the listing JSON of messages listed before (docs/architecture.md
  // "Serialise once"), shared by every check and wait of the route.
  const fragments = new ListingJsonCache();
  return async (request: FastifyRequest<{ Params: InboxParams; Querystring: CheckQuery }>, reply: FastifyReply) => {
    const { since, before, limit = CHECK_MAX_LIMIT, wait = 0, to, from, subject } = request.query;
    const checkRequest = { sinceId: since, beforeId: before, limit, filter: { to, from, subject } };
    const ifNoneMatch = request.headers['if-none-match'];
    // Session, inbox and mark in one store operation (InboxService.readPoll), then the steps
    // of requireSession and consumePollBudget, in the same order. A held check counts once
    // against the poll budget, however long it waits.
    const token = readSessionToken(request);
    const readIds = ifNoneMatch === undefined || wait > 0;
    const polled = await deps.inboxes.readPoll(deps.sessions.tokenHashOf(token), request.params.username, checkRequest, readIds);
    const session = admitSession(deps, reply, token, polled.session === null ? null : await deps.sessions.renew(polled.session));
    await consumePollBudget(deps, request, reply, session.id);
    const gone = wait > 0 ? clientGone(reply) : undefined;
    const { etag, page } = await deps.live.check(polled, request.params.username, checkRequest, fragments, {
      waitSeconds: wait,
      isCurrent: (tag) => ifNoneMatchHits(ifNoneMatch, tag),
      clientAddress: request.ip,
      cancel: gone,
    });
    if (gone !== undefined) reply.raw.off('close', gone.raise);
    // A held check has no ETag: it answers when something is new, not when nothing changed.
    if (etag !== undefined) reply.header('ETag', etag);
    if (page === null) return reply.code(304).send();
    // Answered because the node stops: the client must not send its next request here.
    if (wait > 0 && deps.live.stopping) reply.header('Connection', 'close');
    // Already JSON (CheckResponse): fastify sends a string as it is.
    return reply.type(JSON_TYPE).send(renderCheckPage(page));
  };
}

/** Raised when the client of `reply` goes away before its answer is written. */
function clientGone(reply: FastifyReply): ClientGone {
  const gone = new ClientGone();
  reply.raw.once('close', gone.raise);
  return gone;
}

/** DELETE /api/inbox/:username */
export function deleteInboxHandler(deps: HttpDeps) {
  return async (request: FastifyRequest<{ Params: InboxParams }>, reply: FastifyReply) => {
    const session = await requireSession(deps, request, reply);
    await deps.inboxes.discard(session, request.params.username);
    return { success: true as const };
  };
}

/** GET /api/session */
export function sessionHandler(deps: HttpDeps) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const session = await requireSession(deps, request, reply);
    const overview = await deps.inboxes.overview(session);
    return {
      success: true as const,
      premium: overview.premium,
      premium_until: overview.premiumUntil?.toISOString() ?? null,
      limits: overview.limits,
      inboxes: overview.inboxes.map(presentInboxSummary),
    };
  };
}

/** GET /api/domains: public, cacheable for a minute. */
export function domainsHandler(deps: HttpDeps) {
  return async (_request: FastifyRequest, reply: FastifyReply) => {
    reply.header('Cache-Control', 'public, max-age=60');
    return { domains: [...deps.domains] };
  };
}
