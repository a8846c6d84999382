import cookie from '@fastify/cookie';
import swagger from '@fastify/swagger';
import { Readable } from 'node:stream';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import { AppError } from '../domain/errors.js';
import { API_PER_ADDRESS } from '../domain/fair-use.js';
import { errorAnswer, logAppError } from './error-map.js';
import { setRateHeaders, type HttpDeps } from './http-deps.js';
import { registerRoutes } from './routes.js';
import { sharedSchemas } from './schemas/inbox-schemas.js';
import { webhookSharedSchemas } from './schemas/webhook-schemas.js';
import { applySecurityHeaders } from './security-headers.js';
import { ANSWER_SLICE_BYTES, StallGuard, type StallGuardOptions } from './stall-guard.js';
import { registerWebAssets } from './web-assets.js';

/** JSON bodies are a license key at most: 16 KiB leaves ample room and bounds parsing work. */
export const BODY_LIMIT_BYTES = 16 * 1024;
/** Path parameters carry an address (RFC 5321: at most 256 octets) or an id; 512 bounds both. */
const MAX_PARAM_LENGTH = 512;
/** Slowloris guard: a request must arrive whole within this time. */
const REQUEST_TIMEOUT_MS = 30_000;

/** Options of the HTTP adapter. */
export interface HttpServerOptions {
  deps: HttpDeps;
  logger: Logger;
  trustProxy: boolean;
  /** Called after every response (metrics). `route` is the route pattern, not the URL. */
  onResponse?: (method: string, route: string, status: number, seconds: number) => void;
  /** Tests only: shorter times for the rule that drops a client taking no bytes (stall-guard.ts). */
  stall?: StallGuardOptions;
}

/** Builds the Fastify instance with every route, hook and error mapping; does not listen. */
export async function createHttpServer(options: HttpServerOptions): Promise<FastifyInstance> {
  const deps: HttpDeps = { ...options.deps, reportResponse: options.onResponse };
  const app = Fastify({
    // pino's Logger is a FastifyBaseLogger; naming the base type keeps FastifyInstance's default generics.
    loggerInstance: options.logger as FastifyBaseLogger,
    // Access lines per request would dominate the log at polling rates; metrics count requests.
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: options.trustProxy,
    bodyLimit: BODY_LIMIT_BYTES,
    requestTimeout: REQUEST_TIMEOUT_MS,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Malformed URLs (bad percent-encoding) get the JSON error shape, not Fastify's default.
    frameworkErrors: (error, _request, reply) => {
      sendError(reply, new AppError('invalid_request', `Malformed request: ${error.message}`));
    },
    // A request that is not even HTTP gets a plain 400 and the socket closes; never a crash.
    clientErrorHandler: (_error, socket) => {
      if (socket.writable) {
        const body = JSON.stringify({ success: false, error: { code: 'invalid_request', message: 'Malformed HTTP request.' } });
        socket.end(`HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
      } else socket.destroy();
    },
  });

  for (const schema of [...sharedSchemas, ...webhookSharedSchemas]) app.addSchema(schema);
  await app.register(cookie);
  await app.register(swagger, {
    // Shared schemas keep their $id as their name in components (not def-0, def-1, …).
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'tempinbox',
        version: '1.0.0',
        description: 'Temporary e-mail inboxes: create an address, receive mail over SMTP, poll it. See docs/api.md.',
      },
      components: {
        securitySchemes: { session: { type: 'apiKey', in: 'cookie', name: 'tempinbox_session' } },
      },
    },
  });

  const routes: Array<{ method: string; pattern: RegExp }> = [];
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const pattern = routePattern(route.url);
    for (const method of methods) routes.push({ method, pattern });
  });

  app.addHook('onRequest', async (request, reply) => {
    applySecurityHeaders(reply, request.url);
    if (request.url.startsWith('/api/')) {
      setRateHeaders(reply, await deps.fairUse.consume([[API_PER_ADDRESS, request.ip]]));
    }
  });
  if (options.onResponse) {
    const report = options.onResponse;
    app.addHook('onResponse', async (request, reply) => {
      report(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    });
  }

  // A client that takes none of its answer for a minute is cut off (docs/api.md "Fair use and
  // limits"). Large answers go out in slices so that a client reading them slowly shows its
  // progress to that rule: a single write completes only once the client took all of it.
  const stall = new StallGuard(options.stall);
  stall.watch(app.server);
  app.addHook('onClose', async () => stall.stop());
  app.addHook('onSend', async (_request, reply, payload) => {
    // A UTF-16 unit is at most 3 bytes of UTF-8: most answers are known small without encoding them.
    if (typeof payload === 'string' ? payload.length * 3 <= ANSWER_SLICE_BYTES || Buffer.byteLength(payload) <= ANSWER_SLICE_BYTES : !Buffer.isBuffer(payload) || payload.length <= ANSWER_SLICE_BYTES) {
      return payload;
    }
    const bytes = typeof payload === 'string' ? Buffer.from(payload) : (payload as Buffer);
    reply.header('Content-Length', String(bytes.length));
    return Readable.from(slices(bytes), { objectMode: false });
  });

  app.setErrorHandler((error, request, reply) => {
    sendError(reply, logAppError(request.log, error));
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = [...new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method))];
    if (allowed.length > 0) {
      reply.header('Allow', allowed.sort().join(', '));
      sendError(reply, new AppError('method_not_allowed', `Use ${allowed.join(' or ')} on this path.`));
      return;
    }
    sendError(reply, new AppError('not_found', 'No such endpoint.'));
  });

  registerRoutes(app, deps);
  // The web app at `/` (docs/web.md); absent when only the server was built.
  await registerWebAssets(app);
  return app;
}

/**
 * The paths a Fastify route URL matches: a `:param` is one segment, a `*` anything, and every
 * other character only itself (the `.` of /api/openapi.json is a dot, not any character).
 */
export function routePattern(url: string): RegExp {
  const parts = url.split(/(:[^/]+|\*)/).map((part) => {
    if (part === '*') return '.*';
    if (part.startsWith(':')) return '[^/]+';
    return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  });
  return new RegExp(`^${parts.join('')}$`);
}

/** `bytes` in ANSWER_SLICE_BYTES pieces (views, not copies). */
function* slices(bytes: Buffer): Generator<Buffer> {
  for (let at = 0; at < bytes.length; at += ANSWER_SLICE_BYTES) yield bytes.subarray(at, at + ANSWER_SLICE_BYTES);
}

/** Writes the contract's error shape with the mapped status (and Retry-After for 429). */
function sendError(reply: FastifyReply, error: AppError): void {
  const { status, headers, body } = errorAnswer(error);
  void reply.code(status).headers(headers).send(body);
}
