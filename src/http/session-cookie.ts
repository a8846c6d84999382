import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SerializeOptions } from '@fastify/cookie';
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
  reply.setCookie(SESSION_COOKIE, token, sessionCookieOptions(secure));
}

/**
 * The same cookie as a Set-Cookie header value, for an answer written past Fastify (an event
 * stream), where the cookie plugin's own writer never runs.
 */
export function sessionCookieHeader(server: FastifyInstance, token: string, secure: boolean): string {
  return server.serializeCookie(SESSION_COOKIE, token, sessionCookieOptions(secure));
}

function sessionCookieOptions(secure: boolean): SerializeOptions {
  return { httpOnly: true, sameSite: 'strict', path: '/', secure, maxAge: SESSION_LIFETIME_SECONDS };
}
