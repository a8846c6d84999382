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
 * app's own requests (`same-origin`) and a request no page made (`none`: typed, bookmarked,
 * or a client outside any page). A request without the header (curl, the CLI, any non-browser
 * client, or a browser over plain http to a non-local host) is accepted too. `cross-site` and
 * `same-site` (another port or subdomain of the same site, which a SameSite=Strict cookie does
 * not keep out) are refused: see docs/api.md "Cross-site requests".
 */
const ACCEPTED_FETCH_SITES: ReadonlySet<string> = new Set(['same-origin', 'none']);

/**
 * `Sec-Fetch-Mode` values accepted on a state-changing route: what the web app's fetch() sends
 * (`cors`, the default mode of fetch(), or `same-origin`). Every other mode is refused, however
 * same-origin the request: `navigate` is a link, a form, a redirect or a typed URL (a link in a
 * mail shown by the web app is a same-origin navigation), `no-cors` an image or a script,
 * `websocket` a socket; none of them is the web app calling its API. An absent header is a
 * client outside the browser, accepted like an absent `Sec-Fetch-Site`.
 */
const ACCEPTED_FETCH_MODES: ReadonlySet<string> = new Set(['cors', 'same-origin']);

/** The value of a Fetch Metadata header, lowercased; undefined when absent. */
function fetchMetadata(request: FastifyRequest, name: 'sec-fetch-site' | 'sec-fetch-mode'): string | undefined {
  const header = request.headers[name];
  if (header === undefined) return undefined;
  return (Array.isArray(header) ? header.join(',') : header).trim().toLowerCase();
}

/** True when the request says it was made by another site's (or another origin's) page. */
export function isCrossSiteRequest(request: FastifyRequest): boolean {
  const site = fetchMetadata(request, 'sec-fetch-site');
  return site !== undefined && !ACCEPTED_FETCH_SITES.has(site);
}

/** True when the browser says the request is not a fetch() of a page: a navigation, an image, a socket. */
export function isNavigationRequest(request: FastifyRequest): boolean {
  const mode = fetchMetadata(request, 'sec-fetch-mode');
  return mode !== undefined && !ACCEPTED_FETCH_MODES.has(mode);
}

/** Why a navigation is refused, in the error's message: the code is the one of the cross-site guard. */
const NAVIGATION_REFUSED =
  'A link, a form or a typed address may not make this call, even on this site; use the tempinbox web app or a non-browser client.';

/**
 * onRequest hook of every state-changing route: 403 cross_site_request for a request another
 * site's page made, and for any request that is not a page's fetch() (a link in a mail, a
 * form), before anything is read or written.
 */
export async function rejectCrossSite(request: FastifyRequest): Promise<void> {
  if (isCrossSiteRequest(request)) throw new AppError('cross_site_request');
  if (isNavigationRequest(request)) throw new AppError('cross_site_request', NAVIGATION_REFUSED);
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
