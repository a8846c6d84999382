/**
 * The API's JSON shapes, generated from docs/openapi.json (see ./generated); nothing here is
 * written by hand but the names the library gives them.
 */
export type {
  Attachment,
  AuthResult,
  DeletedEvent,
  DomainsResponse,
  ErrorResponse,
  ExpiredEvent,
  InboxResponse,
  Limits,
  Message,
  MessageDetailResponse,
  MessageLink,
  RedeemResponse,
  SenderAuth,
  SessionInbox,
  SessionResponse,
  WebhookTestResponse,
} from './generated/index.js';
import type { GetApiCheckByUsernameResponses, MessageDetailResponse, WebhookAttempt, WebhookResponse, WebhookSetResponse } from './generated/index.js';

/** `GET /api/check/<username>`: a page of messages, newest first. */
export type CheckResponse = GetApiCheckByUsernameResponses[200];

/** One message as `GET /api/messages/<id>` answers it: whole bodies, with headers. */
export type MessageDetail = Omit<MessageDetailResponse, 'success'>;

/** `PUT /api/inbox/<username>/webhook`: the webhook just set, with its secret (the one answer that shows it). */
export type WebhookCreated = WebhookSetResponse['webhook'];

/** One delivery attempt, as `GET /api/inbox/<username>/webhook` lists it. */
export type WebhookDelivery = WebhookAttempt;

/** `GET /api/inbox/<username>/webhook`: the inbox's webhook (null when none) and its last attempts, newest first. */
export type WebhookState = Omit<WebhookResponse, 'success'>;
