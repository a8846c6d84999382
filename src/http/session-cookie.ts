import type { FastifyReply, FastifyRequest } from 'fastify';
import { SESSION_LIFETIME_SECONDS } from '../services/session-service.js';

/** Cookie name fixed by contract §2. */
export const SESSION_COOKIE = 'tempinbox_session';

/** Reads the session cookie value (validated later by SessionService). */
export function readSessionToken(request: FastifyRequest): string | undefined {
  const value = request.cookies[SESSION_COOKIE];
  return typeof value === 'string' ? value : undefined;
}

/** Sets (or renews) the session cookie: HttpOnly, SameSite=Lax, Path=/, 30 days, Secure on https. */
export function setSessionCookie(reply: FastifyReply, token: string, secure: boolean): void {
  reply.setCookie(SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure,
    maxAge: SESSION_LIFETIME_SECONDS,
  });
}
