import type { FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_LIFETIME_SECONDS } from '../services/session-service.js';

/** Cookie name fixed by docs/api.md. */
export const SESSION_COOKIE = 'tempinbox_session';

/** Reads the session cookie value (validated later by SessionService). */
export function readSessionToken(request: FastifyRequest): string | undefined {
  const value = request.cookies[SESSION_COOKIE];
  return typeof value === 'string' ? value : undefined;
}

/**
 * Sets (or renews) the session cookie: HttpOnly, SameSite=Strict, Path=/, 30 days, Secure on
 * https. Strict, not Lax: GET /api/create changes state, and Lax would send the cookie with a
 * cross-site link or redirect to it (docs/api.md "Session cookie").
 */
export function setSessionCookie(reply: FastifyReply, token: string, secure: boolean): void {
  reply.setCookie(SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'strict',
    path: '/',
    secure,
    maxAge: SESSION_LIFETIME_SECONDS,
  });
}
