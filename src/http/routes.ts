import type { FastifyInstance } from 'fastify';
import { guardStateChangingRoutes } from './cross-site-guard.js';
import { attachmentHandler, deleteMessageHandler, messageHandler, rawMessageHandler } from './handlers/message-handlers.js';
import { checkInboxHandler, createInboxHandler, deleteInboxHandler, domainsHandler, sessionHandler } from './handlers/inbox-handlers.js';
import { EVENTS_ROUTE, inboxEventsHandler } from './handlers/live-handlers.js';
import { healthHandler, metricsHandler, readyHandler } from './handlers/ops-handlers.js';
import { redeemHandler } from './handlers/premium-handlers.js';
import { deleteWebhookHandler, getWebhookHandler, putWebhookHandler, testWebhookHandler } from './handlers/webhook-handlers.js';
import type { HttpDeps } from './http-deps.js';
import type { AttachmentParams, CheckQuery, CreateQuery, EventsQuery, InboxParams, MessageParams, RedeemBody } from './schemas/inbox-schemas.js';
import { schemas } from './schemas/inbox-schemas.js';
import { webhookSchemas, type WebhookBody } from './schemas/webhook-schemas.js';

/**
 * The route table: every METHOD path → handler of the service, in one place.
 * The OpenAPI document is generated from these schemas by @fastify/swagger.
 */
export function registerRoutes(app: FastifyInstance, deps: HttpDeps): void {
  // Every route below that changes state (POST, DELETE, and GETs flagged `changesState`)
  // refuses requests made by another site's page: docs/api.md "Session cookie".
  guardStateChangingRoutes(app);
  const spec = { tags: ['spec'] };
  const extra = { tags: ['beyond the spec'], security: [{ session: [] }] };
  /** Routes that need the session cookie (the OpenAPI `session` security scheme). */
  const cookie = { security: [{ session: [] }] };
  const ops = { tags: ['operations'] };

  app.get<{ Querystring: CreateQuery }>('/api/create',
    { config: { changesState: true }, schema: { ...spec, summary: 'Create an inbox, or reuse the session’s current one', ...schemas.create } },
    createInboxHandler(deps));
  app.get<{ Params: InboxParams; Querystring: CheckQuery }>('/api/check/:username',
    { schema: { ...spec, ...cookie, summary: 'Poll an inbox the session owns', ...schemas.check } },
    checkInboxHandler(deps));
  app.get('/api/domains',
    { schema: { ...spec, summary: 'Domains available for new addresses', ...schemas.domains } },
    domainsHandler(deps));
  app.post<{ Body: RedeemBody }>('/api/premium/redeem',
    { schema: { ...spec, summary: 'Redeem a Premium license into the session', ...schemas.redeem } },
    redeemHandler(deps));

  app.get('/api/session',
    { schema: { ...extra, summary: 'Mode, limits and inboxes of the session', ...schemas.session } },
    sessionHandler(deps));
  app.get<{ Params: MessageParams }>('/api/messages/:id',
    { schema: { ...extra, summary: 'One message with its headers', ...schemas.message } },
    messageHandler(deps));
  app.get<{ Params: MessageParams }>('/api/messages/:id/raw',
    { schema: { ...extra, summary: 'The original message (message/rfc822)', ...schemas.raw } },
    rawMessageHandler(deps));
  app.get<{ Params: AttachmentParams }>('/api/messages/:id/attachments/:aid',
    { schema: { ...extra, summary: 'Download an attachment', ...schemas.attachment } },
    attachmentHandler(deps));
  app.delete<{ Params: MessageParams }>('/api/messages/:id',
    { schema: { ...extra, summary: 'Delete one message', ...schemas.deleteMessage } },
    deleteMessageHandler(deps));
  app.get<{ Params: InboxParams; Querystring: EventsQuery }>(EVENTS_ROUTE,
    { schema: { ...extra, summary: 'Follow an inbox as server-sent events', ...schemas.events } },
    inboxEventsHandler(deps));
  app.delete<{ Params: InboxParams }>('/api/inbox/:username',
    { schema: { ...extra, summary: 'Discard an inbox and its messages', ...schemas.deleteInbox } },
    deleteInboxHandler(deps));

  const webhooks = { tags: ['webhooks'], security: [{ session: [] }] };
  app.put<{ Params: InboxParams; Body: WebhookBody }>('/api/inbox/:username/webhook',
    { schema: { ...webhooks, summary: 'Set (or replace) the inbox’s webhook (Premium)', ...webhookSchemas.put } },
    putWebhookHandler(deps));
  app.get<{ Params: InboxParams }>('/api/inbox/:username/webhook',
    { schema: { ...webhooks, summary: 'The inbox’s webhook and its last delivery attempts', ...webhookSchemas.get } },
    getWebhookHandler(deps));
  app.delete<{ Params: InboxParams }>('/api/inbox/:username/webhook',
    { schema: { ...webhooks, summary: 'Remove the inbox’s webhook and what it still owes', ...webhookSchemas.delete } },
    deleteWebhookHandler(deps));
  app.post<{ Params: InboxParams }>('/api/inbox/:username/webhook/test',
    { schema: { ...webhooks, summary: 'Owe one message.test delivery to the inbox’s webhook (Premium)', ...webhookSchemas.test } },
    testWebhookHandler(deps));

  app.get('/api/openapi.json', { schema: { ...ops, summary: 'This OpenAPI 3.1 document' } },
    async () => app.swagger());
  app.get('/healthz', { schema: { ...ops, summary: 'Liveness' } }, healthHandler());
  app.get('/readyz', { schema: { ...ops, summary: 'Readiness: the database answers' } }, readyHandler(deps));
  app.get('/metrics', { schema: { ...ops, summary: 'Prometheus metrics' } }, metricsHandler(deps));
}
