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
} from './generated/index.js';
import type { GetApiCheckByUsernameResponses, MessageDetailResponse } from './generated/index.js';

/** `GET /api/check/<username>`: a page of messages, newest first. */
export type CheckResponse = GetApiCheckByUsernameResponses[200];

/** One message as `GET /api/messages/<id>` answers it: whole bodies, with headers. */
export type MessageDetail = Omit<MessageDetailResponse, 'success'>;

/**
 * `PUT /api/inbox/<username>/webhook`: the webhook just set, with its secret (the one answer
 * that shows it).
 */
export interface WebhookCreated {
  url: string;
  /** The HMAC key of `Tempinbox-Signature`: keep it, no later answer shows it. */
  secret: string;
  created_at: string;
}

/** One delivery attempt, as `GET /api/inbox/<username>/webhook` lists it. */
export interface WebhookDelivery {
  /** The delivery id, as in the `Tempinbox-Delivery` header (the same on each attempt of one delivery). */
  id: string;
  /** The message delivered; null for a test delivery. */
  message_id: string | null;
  /** 1 to 6. */
  attempt: number;
  /** The receiver's HTTP status; null when no answer came (see `error`). */
  status: number | null;
  /** Why the attempt failed without an answer (a timeout, a refused connection…); null otherwise. */
  error: string | null;
  at: string;
}

/** `GET /api/inbox/<username>/webhook`: the inbox's webhook (null when none) and its last 20 attempts, newest first. */
export interface WebhookState {
  webhook: { url: string; created_at: string } | null;
  deliveries: WebhookDelivery[];
}
