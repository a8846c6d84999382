import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpDeps } from '../http-deps.js';

/** GET /healthz: the process is alive (no dependency checked). */
export function healthHandler() {
  return async () => ({ status: 'ok' });
}

/** GET /readyz: 200 when the database answers, else 503 unavailable (thrown by checkReady). */
export function readyHandler(deps: HttpDeps) {
  return async () => {
    await deps.checkReady();
    return { status: 'ready' };
  };
}

/** GET /metrics: Prometheus text format. */
export function metricsHandler(deps: HttpDeps) {
  return async (_request: FastifyRequest, reply: FastifyReply) => {
    const { contentType, body } = await deps.renderMetrics();
    reply.type(contentType);
    return body;
  };
}
