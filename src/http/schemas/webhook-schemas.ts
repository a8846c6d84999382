import { Type, type Static } from '@sinclair/typebox';
import { WEBHOOK_ATTEMPTS_KEPT } from '../../ports/webhook-store.js';
import { COMMON_ERRORS, refTo, SuccessResponse, withErrors } from './common.js';
import { InboxParams } from './inbox-schemas.js';

const isoDate = (description: string) => Type.String({ format: 'date-time', description });

/**
 * Longest `url` and `secret` the schema lets through to the rules: far above what the rules
 * accept (2,048 and 128 characters), so that an over-long value gets the rule's own sentence,
 * and far below the body limit.
 */
const URL_FIELD_MAX = 8192;
const SECRET_FIELD_MAX = 1024;

/** PUT /api/inbox/<username>/webhook body. */
export const WebhookBody = Type.Object(
  {
    url: Type.String({ maxLength: URL_FIELD_MAX, description: 'http or https, no user or password, at most 2,048 characters; its host must be public' }),
    secret: Type.Optional(Type.String({ maxLength: SECRET_FIELD_MAX, description: '16–128 characters of visible ASCII; 32 random bytes base64url when missing' })),
  },
  { additionalProperties: false },
);
export type WebhookBody = Static<typeof WebhookBody>;

/** PUT answer: the only time the secret is shown. */
export const WebhookSetResponse = Type.Object({
  success: Type.Literal(true),
  webhook: Type.Object({
    url: Type.String({ description: 'the URL in normal form, as deliveries are posted to it' }),
    secret: Type.String({ description: 'signs every delivery (Tempinbox-Signature); shown only in this answer' }),
    created_at: isoDate('when this webhook was set'),
  }),
}, { $id: 'WebhookSetResponse' });

/** One delivery attempt as GET lists it. */
export const WebhookAttemptSchema = Type.Object({
  id: Type.String({ description: 'the delivery id, as in Tempinbox-Delivery' }),
  message_id: Type.Union([Type.String(), Type.Null()], { description: 'the message announced; null for a test delivery' }),
  attempt: Type.Integer({ minimum: 1, maximum: 6 }),
  status: Type.Union([Type.Integer(), Type.Null()], { description: 'the HTTP status answered, or null when none came' }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'why the attempt failed, or null' }),
  at: isoDate('when the attempt ended'),
}, { $id: 'WebhookAttempt' });

/** GET answer: the webhook without its secret, and the last attempts. */
export const WebhookResponse = Type.Object({
  success: Type.Literal(true),
  webhook: Type.Union([Type.Object({ url: Type.String(), created_at: isoDate('when this webhook was set') }), Type.Null()]),
  deliveries: Type.Array(refTo(WebhookAttemptSchema), { maxItems: WEBHOOK_ATTEMPTS_KEPT, description: `the last ${WEBHOOK_ATTEMPTS_KEPT} attempts, newest first` }),
}, { $id: 'WebhookResponse' });

/** POST …/webhook/test answer. */
export const WebhookTestResponse = Type.Object({
  success: Type.Literal(true),
  delivery: Type.Object({ id: Type.String({ description: 'the delivery id, as in Tempinbox-Delivery' }) }),
}, { $id: 'WebhookTestResponse' });

/** Named schemas of the webhook routes, registered with the others. */
export const webhookSharedSchemas = [WebhookSetResponse, WebhookAttemptSchema, WebhookResponse, WebhookTestResponse];

export const webhookSchemas = {
  put: { params: InboxParams, body: WebhookBody, response: withErrors(refTo(WebhookSetResponse), [...COMMON_ERRORS, 401, 403, 404, 410, 413]) },
  get: { params: InboxParams, response: withErrors(refTo(WebhookResponse), [...COMMON_ERRORS, 401, 404]) },
  delete: { params: InboxParams, response: withErrors(SuccessResponse, [...COMMON_ERRORS, 401, 403, 404]) },
  test: { params: InboxParams, response: withErrors(refTo(WebhookTestResponse), [...COMMON_ERRORS, 401, 403, 404, 410]) },
};
