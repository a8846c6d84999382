import type { FastifyReply } from 'fastify';

/**
 * API responses are data, never documents: nothing may load, frame or navigate from them.
 * The web application's HTML gets PAGE_CSP instead (src/http/web-assets.ts).
 */
const API_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/**
 * The web app's policy (docs/web.md, "Security model"). Only our own script and styles; no
 * inline script at all. Inline *style attributes* are allowed (not style elements) because a
 * message's sanitised HTML keeps its formatting in style attributes, and a srcdoc frame
 * inherits this policy. img-src admits http(s) for the same reason: it is the frame's own,
 * stricter meta policy (`img-src data:`) that holds remote images back until the reader
 * chooses "show images"; both policies must allow a load. The page talks only to our API.
 */
export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "style-src-attr 'unsafe-inline'",
  "img-src 'self' data: http: https:",
  "connect-src 'self'",
  "frame-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

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
