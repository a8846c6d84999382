import type { FastifyReply } from 'fastify';

/**
 * API responses are data, never documents: nothing may load, frame or navigate from them.
 * The web application (a later issue) sets its own, stricter-than-default policy for pages.
 */
const API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/** Sets the security headers every response carries, and no-store on the API. */
export function applySecurityHeaders(reply: FastifyReply, url: string): void {
  reply.header('X-Content-Type-Options', 'nosniff');
  reply.header('Referrer-Policy', 'no-referrer');
  reply.header('X-Frame-Options', 'DENY');
  reply.header('Cross-Origin-Resource-Policy', 'same-origin');
  reply.header('Content-Security-Policy', API_CSP);
  // Domains may be cached (its handler overrides this); everything else under /api is private.
  if (url.startsWith('/api/')) reply.header('Cache-Control', 'no-store');
}
