import type { FastifyReply, FastifyRequest } from 'fastify';
import { requireSession, type HttpDeps } from '../http-deps.js';
import type { InboxParams } from '../schemas/inbox-schemas.js';
import type { WebhookBody } from '../schemas/webhook-schemas.js';

/** PUT /api/inbox/:username/webhook */
export function putWebhookHandler(deps: HttpDeps) {
  return async (request: FastifyRequest<{ Params: InboxParams; Body: WebhookBody }>, reply: FastifyReply) => {
    const session = await requireSession(deps, request, reply);
    const webhook = await deps.webhooks.set(session, request.params.username, request.body);
    // The secret is in this answer only: no cache may keep it.
    reply.header('Cache-Control', 'no-store');
    return { success: true as const, webhook: { url: webhook.url, secret: webhook.secret, created_at: webhook.createdAt.toISOString() } };
  };
}

/** GET /api/inbox/:username/webhook */
export function getWebhookHandler(deps: HttpDeps) {
  return async (request: FastifyRequest<{ Params: InboxParams }>, reply: FastifyReply) => {
    const session = await requireSession(deps, request, reply);
    const { webhook, deliveries } = await deps.webhooks.get(session, request.params.username);
    return {
      success: true as const,
      webhook: webhook === null ? null : { url: webhook.url, created_at: webhook.createdAt.toISOString() },
      deliveries: deliveries.map((attempt) => ({
        id: attempt.deliveryId,
        message_id: attempt.messageId,
        attempt: attempt.attempt,
        status: attempt.status,
        error: attempt.error,
        at: attempt.at.toISOString(),
      })),
    };
  };
}

/** DELETE /api/inbox/:username/webhook */
export function deleteWebhookHandler(deps: HttpDeps) {
  return async (request: FastifyRequest<{ Params: InboxParams }>, reply: FastifyReply) => {
    const session = await requireSession(deps, request, reply);
    await deps.webhooks.remove(session, request.params.username);
    return { success: true as const };
  };
}

/** POST /api/inbox/:username/webhook/test */
export function testWebhookHandler(deps: HttpDeps) {
  return async (request: FastifyRequest<{ Params: InboxParams }>, reply: FastifyReply) => {
    const session = await requireSession(deps, request, reply);
    const { deliveryId } = await deps.webhooks.test(session, request.params.username);
    return { success: true as const, delivery: { id: deliveryId } };
  };
}
