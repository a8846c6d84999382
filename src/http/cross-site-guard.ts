import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { AppError } from '../domain/errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A safe-method route that nevertheless changes state (GET /api/create): guarded like POST/DELETE. */
    changesState?: boolean;
  }
}

/** Methods that never change state (RFC 9110 §9.2.1 "safe methods"); every other one is guarded. */
const SAFE_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * `Sec-Fetch-Site` values (W3C Fetch Metadata) accepted on a state-changing route: the web
 * app's own requests (`same-origin`) and what a person types or bookmarks (`none`). A request
 * without the header (curl, the CLI, any non-browser client, or a browser over plain http to a
 * non-local host) is accepted too. `cross-site` and `same-site` (another port or subdomain of
 * the same site, which a SameSite=Strict cookie does not keep out) are refused: see docs/api.md
 * "Session cookie".
 */
const ACCEPTED_FETCH_SITES: ReadonlySet<string> = new Set(['same-origin', 'none']);

/** True when the request says it was made by another site's (or another origin's) page. */
export function isCrossSiteRequest(request: FastifyRequest): boolean {
  const header = request.headers['sec-fetch-site'];
  if (header === undefined) return false;
  const value = (Array.isArray(header) ? header.join(',') : header).trim().toLowerCase();
  return !ACCEPTED_FETCH_SITES.has(value);
}

/** onRequest hook: 403 cross_site_request for a request another site's page made. */
export async function rejectCrossSite(request: FastifyRequest): Promise<void> {
  if (isCrossSiteRequest(request)) throw new AppError('cross_site_request');
}

/** True for a route that changes state: any unsafe method, or a route flagged `changesState`. */
export function routeChangesState(route: Pick<RouteOptions, 'method' | 'config'>): boolean {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  return route.config?.changesState === true || methods.some((method) => !SAFE_METHODS.has(method.toUpperCase()));
}

/**
 * Puts rejectCrossSite first on every state-changing route registered after this call, so a
 * new POST or DELETE in the route table is guarded without anyone remembering to.
 */
export function guardStateChangingRoutes(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (!routeChangesState(route)) return;
    const existing = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    route.onRequest = [rejectCrossSite, ...existing];
  });
}
