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
