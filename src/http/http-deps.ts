import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import { CHECK_PER_ADDRESS, CHECK_PER_SESSION } from '../domain/fair-use.js';
import type { Session } from '../domain/types.js';
import type { RateDecision } from '../ports/rate-limiter.js';
import type { FairUseService } from '../services/fair-use-service.js';
import type { InboxService } from '../services/inbox-service.js';
import type { LicenseService } from '../services/license-service.js';
import type { LiveMailService } from '../services/live-mail-service.js';
import type { MessageService } from '../services/message-service.js';
import type { SessionService } from '../services/session-service.js';
import type { WebhookService } from '../services/webhook-service.js';
import { readSessionToken, setSessionCookie } from './session-cookie.js';

/** What the HTTP adapter needs from the composition root. */
export interface HttpDeps {
  sessions: SessionService;
  inboxes: InboxService;
  messages: MessageService;
  licenses: LicenseService;
  /** Long-polls and event streams. */
  live: LiveMailService;
  fairUse: FairUseService;
  /** An inbox's webhook (set, read, remove, test). */
  webhooks: WebhookService;
  domains: readonly string[];
  /** Cookies get `Secure` when PUBLIC_URL is https. */
  secureCookies: boolean;
  /** Resolves when the database answers (readiness). */
  checkReady: () => Promise<void>;
  /** Prometheus text exposition. */
  renderMetrics: () => Promise<{ contentType: string; body: string }>;
  /**
   * Counts a response the route finished itself, outside Fastify's onResponse hook (an event
   * stream, whose reply is hijacked); set by createHttpServer from its `onResponse`.
   */
  reportResponse?: (method: string, route: string, status: number, seconds: number) => void;
}

/** The caller's live session, with the cookie renewed; 401 session_required without one. */
export async function requireSession(deps: HttpDeps, request: FastifyRequest, reply: FastifyReply): Promise<Session> {
  const token = readSessionToken(request);
  return admitSession(deps, reply, token, await deps.sessions.resolve(token));
}

/**
 * requireSession for a session already found by the hash of cookie `token` (and renewed):
 * 401 session_required without one, else the cookie is set again.
 */
export function admitSession(deps: HttpDeps, reply: FastifyReply, token: string | undefined, session: Session | null): Session {
  if (session === null || token === undefined) throw new AppError('session_required');
  setSessionCookie(reply, token, deps.secureCookies);
  return session;
}

/** The caller's session, made (and its cookie set) when it has none. */
export async function openSession(deps: HttpDeps, request: FastifyRequest, reply: FastifyReply): Promise<Session> {
  const token = readSessionToken(request);
  const { session, newToken } = await deps.sessions.open(token);
  const cookie = newToken ?? token;
  if (cookie !== undefined) setSessionCookie(reply, cookie, deps.secureCookies);
  return session;
}

/** RateLimit-* headers (IETF draft "RateLimit header fields for HTTP") for the tightest budget. */
export function setRateHeaders(reply: FastifyReply, report: RateDecision | null): void {
  if (report === null) return;
  reply.header('RateLimit-Limit', String(report.limit));
  reply.header('RateLimit-Remaining', String(Math.max(0, report.remaining)));
  reply.header('RateLimit-Reset', String(Math.max(0, Math.ceil(report.resetSeconds))));
}

/**
 * Counts one poll (a check, or the opening of an event stream) against the session's and the
 * client's poll budgets (docs/api.md "Fair use and limits") and sets the RateLimit headers.
 */
export async function consumePollBudget(deps: HttpDeps, request: FastifyRequest, reply: FastifyReply, sessionId: string): Promise<void> {
  setRateHeaders(
    reply,
    await deps.fairUse.consume([
      [CHECK_PER_SESSION, sessionId],
      [CHECK_PER_ADDRESS, request.ip],
    ]),
  );
}
