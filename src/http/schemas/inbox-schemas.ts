import { Type, type Static } from '@sinclair/typebox';
import { CHECK_BUDGET_BYTES, CHECK_FIELD_BYTES, CHECK_MAX_LIMIT } from '../../domain/check-limits.js';
import { MAX_WAIT_SECONDS } from '../../domain/live-limits.js';
import { COMMON_ERRORS, ErrorResponse, refTo, SuccessResponse, withErrors } from './common.js';
import { AuthResultSchema, insightFields, MessageLinkSchema, SenderAuthSchema } from './insight-schemas.js';

/** Longest filter value: an address is at most 320 characters (RFC 5321 §4.5.3.1). */
const FILTER_MAX_LENGTH = 320;

const isoDate = (description: string) => Type.String({ format: 'date-time', description });

/** An inbox as create answers it (the spec's Inbox plus domain and times). */
export const InboxResponse = Type.Object({
  success: Type.Literal(true),
  email: Type.String({ description: '<username>@<domain>' }),
  username: Type.String(),
  domain: Type.String(),
  ttl: Type.Integer({ description: 'lifetime in seconds = expires_at − created_at' }),
  expires_at: isoDate('when the inbox stops receiving and reading'),
  created_at: isoDate('when the inbox was created'),
}, { $id: 'InboxResponse' });

/** GET /api/create query. Usernames are validated by the service (username_invalid). */
export const CreateQuery = Type.Object({
  username: Type.Optional(Type.String({ maxLength: 320, description: 'custom local part (Premium)' })),
  domain: Type.Optional(Type.String({ maxLength: 253, description: 'one of GET /api/domains; default the first' })),
});
export type CreateQuery = Static<typeof CreateQuery>;

/** An attachment as listed with a message. */
export const AttachmentInfo = Type.Object({
  id: Type.String(),
  filename: Type.String(),
  content_type: Type.String(),
  size: Type.Integer(),
}, { $id: 'Attachment' });

const messageFields = {
  id: Type.String({ description: 'random, never sequential' }),
  from: Type.String({ description: 'From header as written, else the envelope sender' }),
  to: Type.String({ description: 'To header as written, else the inbox address' }),
  recipient: Type.String({ description: 'the envelope address (RCPT TO) this copy was delivered to, lowercase, +tag kept' }),
  subject: Type.String(),
  body: Type.String({ description: 'text part; derived from the HTML when only HTML exists' }),
  html: Type.Union([Type.String(), Type.Null()], { description: 'sanitised HTML or null' }),
  date: isoDate('receive time'),
  attachments: Type.Array(refTo(AttachmentInfo)),
  ...insightFields,
};

/** A message in a check result: its bodies may be cut (`truncated`). */
export const Message = Type.Object({
  ...messageFields,
  body: Type.String({ description: `text part (derived from the HTML when only HTML exists), cut at ${CHECK_FIELD_BYTES} bytes of UTF-8` }),
  html: Type.Union([Type.String(), Type.Null()], { description: `sanitised HTML or null, cut at ${CHECK_FIELD_BYTES} bytes of UTF-8` }),
  truncated: Type.Boolean({ description: 'body or html was cut; GET /api/messages/<id> has the whole text' }),
}, { $id: 'Message', description: 'a message as check listings and the event stream show it' });

/** One message with its headers (GET /api/messages/<id>). */
export const MessageDetailResponse = Type.Object({
  success: Type.Literal(true),
  ...messageFields,
  envelope_from: Type.String(),
  size: Type.Integer({ description: 'size of the raw message in bytes' }),
  headers: Type.Array(Type.Object({ name: Type.String(), value: Type.String() })),
}, { $id: 'MessageDetailResponse' });

/** GET /api/check/<username> answer. */
export const CheckResponse = Type.Object({
  success: Type.Literal(true),
  count: Type.Integer({ description: 'length of emails' }),
  emails: Type.Array(refTo(Message), { description: `newest first; at most limit messages and ${CHECK_BUDGET_BYTES} bytes of JSON in all` }),
  has_more: Type.Boolean({ description: 'older messages were left out (by limit or the byte budget): ask again with before=<last id>' }),
});

/**
 * Longest If-None-Match accepted: a few dozen tags of 24 characters. A client sends the one
 * it got; the bound keeps the header's parse small.
 */
const IF_NONE_MATCH_MAX_LENGTH = 1024;

/** Request headers of a check. */
export const CheckHeaders = Type.Object({
  'if-none-match': Type.Optional(
    Type.String({
      maxLength: IF_NONE_MATCH_MAX_LENGTH,
      description: 'the ETag of an earlier answer (not with wait): answered 304 with no body while the answer would be the same',
    }),
  ),
});

/** The ETag response header of a check. */
const CHECK_ETAG_HEADER = Type.String({
  description: 'strong validator of this answer: changes when a message arrives or is deleted, or the query differs (not sent with wait)',
});

/** Path parameter naming an inbox: a username or a full address. */
export const InboxParams = Type.Object({ username: Type.String({ maxLength: 320 }) });
export type InboxParams = Static<typeof InboxParams>;

/** `since`, `before`, `limit`: which messages a check answers. Ids are validated by the service. */
export const CheckQuery = Type.Object({
  since: Type.Optional(Type.String({ maxLength: 64, description: 'only messages received after this message id (an unknown id is ignored)' })),
  before: Type.Optional(
    Type.String({ maxLength: 64, description: 'only messages received before this message id: the next page (an id that is not a message of the inbox is invalid_request)' }),
  ),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: CHECK_MAX_LIMIT, default: CHECK_MAX_LIMIT, description: 'most messages answered' })),
  wait: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_WAIT_SECONDS,
      default: 0,
      description: 'seconds to hold the request while nothing newer than since matches; answered as soon as a matching message arrives (count 0 when the time is up)',
    }),
  ),
  to: Type.Optional(Type.String({ maxLength: FILTER_MAX_LENGTH, description: 'case-insensitive substring of the envelope recipient address (+tag kept), e.g. alice+signup@' })),
  from: Type.Optional(Type.String({ maxLength: FILTER_MAX_LENGTH, description: 'case-insensitive substring of the sender (From header or envelope sender)' })),
  subject: Type.Optional(Type.String({ maxLength: FILTER_MAX_LENGTH, description: 'case-insensitive substring of the subject' })),
});
export type CheckQuery = Static<typeof CheckQuery>;

/** `since`: where a stream resumes when no Last-Event-ID header is sent. */
export const EventsQuery = Type.Object({
  since: Type.Optional(Type.String({ maxLength: 64, description: 'resume after this message id (the Last-Event-ID header wins)' })),
});
export type EventsQuery = Static<typeof EventsQuery>;

/** The text/event-stream answer, described for the OpenAPI document. */
export const EventStreamResponse = Type.String({
  description:
    'text/event-stream: `event: message` (`id:` the message id, `data:` the message JSON as in a check listing), `event: deleted` (`data: {"id"}`), `event: expired` (then the stream ends), and a `: ping` comment at least every 15 s',
});

/** Path parameters of message routes. */
export const MessageParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
export type MessageParams = Static<typeof MessageParams>;
export const AttachmentParams = Type.Object({ id: Type.String({ maxLength: 64 }), aid: Type.String({ maxLength: 64 }) });
export type AttachmentParams = Static<typeof AttachmentParams>;

/** Limits of the session's mode. */
export const Limits = Type.Object({
  max_inboxes: Type.Integer(),
  ttl: Type.Integer(),
  custom_usernames: Type.Boolean(),
}, { $id: 'Limits', description: 'limits of the session’s mode' });

/** An inbox as GET /api/session lists it. */
export const SessionInbox = Type.Object({
  email: Type.String(),
  username: Type.String(),
  domain: Type.String(),
  ttl: Type.Integer(),
  created_at: isoDate('creation'),
  expires_at: isoDate('expiry'),
  count: Type.Integer({ description: 'messages held' }),
}, { $id: 'SessionInbox' });

/** GET /api/session answer. */
export const SessionResponse = Type.Object({
  success: Type.Literal(true),
  premium: Type.Boolean(),
  premium_until: Type.Union([isoDate('end of premium'), Type.Null()]),
  limits: refTo(Limits),
  inboxes: Type.Array(refTo(SessionInbox), { description: 'the active inboxes the session can read, newest first' }),
}, { $id: 'SessionResponse' });

/** POST /api/premium/redeem body. */
export const RedeemBody = Type.Object({ key: Type.String({ minLength: 1, maxLength: 200 }) });
export type RedeemBody = Static<typeof RedeemBody>;

/** POST /api/premium/redeem answer. */
export const RedeemResponse = Type.Object({
  success: Type.Literal(true),
  premium: Type.Literal(true),
  premium_until: isoDate('end of premium'),
  limits: refTo(Limits),
}, { $id: 'RedeemResponse' });

/** GET /api/domains answer. */
export const DomainsResponse = Type.Object({ domains: Type.Array(Type.String()) }, { $id: 'DomainsResponse' });

/** `data:` of the stream's `deleted` event. */
export const DeletedEvent = Type.Object({ id: Type.String({ description: 'the deleted message' }) }, {
  $id: 'DeletedEvent',
  description: 'data of the event stream’s `deleted` event',
});

/** `data:` of the stream's `expired` event (then the stream ends). */
export const ExpiredEvent = Type.Object({}, { $id: 'ExpiredEvent', description: 'data of the event stream’s `expired` event: `{}`' });

/**
 * Every schema referenced by `$ref` (refTo) or named for the document: the HTTP server
 * registers them (addSchema) so that responses serialise through them and the OpenAPI
 * document lists them under components.schemas.
 */
export const sharedSchemas = [
  ErrorResponse, AuthResultSchema, SenderAuthSchema, MessageLinkSchema, AttachmentInfo, Message, MessageDetailResponse,
  InboxResponse, Limits, SessionInbox, SessionResponse, RedeemResponse, DomainsResponse, DeletedEvent, ExpiredEvent,
];

export const schemas = {
  create: { querystring: CreateQuery, response: withErrors(refTo(InboxResponse), [...COMMON_ERRORS, 403, 409]) },
  check: {
    params: InboxParams,
    headers: CheckHeaders,
    querystring: CheckQuery,
    response: {
      ...withErrors(CheckResponse, [...COMMON_ERRORS, 401, 404, 410]),
      200: { ...CheckResponse, headers: { ETag: CHECK_ETAG_HEADER } },
      304: {
        type: 'null',
        description: 'Not Modified: the answer is the one whose ETag the request sent in If-None-Match (no body)',
        headers: { ETag: CHECK_ETAG_HEADER },
      },
    },
  },
  events: {
    params: InboxParams,
    headers: Type.Object({
      'last-event-id': Type.Optional(Type.String({ maxLength: 64, description: 'resume after this message id (EventSource sends it when it reconnects)' })),
    }),
    querystring: EventsQuery,
    response: {
      ...withErrors(EventStreamResponse, [...COMMON_ERRORS, 401, 404, 410]),
      200: { description: 'the event stream', content: { 'text/event-stream': { schema: EventStreamResponse } } },
    },
  },
  domains: { response: { 200: refTo(DomainsResponse) } },
  redeem: { body: RedeemBody, response: withErrors(refTo(RedeemResponse), [...COMMON_ERRORS, 403, 409, 410, 413]) },
  session: { response: withErrors(refTo(SessionResponse), [...COMMON_ERRORS, 401]) },
  message: { params: MessageParams, response: withErrors(refTo(MessageDetailResponse), [...COMMON_ERRORS, 401, 404, 410]) },
  raw: { params: MessageParams },
  attachment: { params: AttachmentParams },
  deleteMessage: { params: MessageParams, response: withErrors(SuccessResponse, [...COMMON_ERRORS, 401, 403, 404]) },
  deleteInbox: { params: InboxParams, response: withErrors(SuccessResponse, [...COMMON_ERRORS, 401, 403, 404]) },
};
