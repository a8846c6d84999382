import type { Static } from '@sinclair/typebox';
import type { Inbox, InboxWithCount, MessageDetail, MessageView } from '../domain/types.js';
import type { CheckPage, ListedFragment } from '../services/check-page.js';
import type { ListingJsonCache } from './listing-json-cache.js';
import type { CheckResponse, InboxResponse, Message, MessageDetailResponse } from './schemas/inbox-schemas.js';

/** Lifetime in whole seconds (contract: ttl = expires_at − created_at). */
function lifetimeSeconds(inbox: Inbox): number {
  return Math.round((inbox.expiresAt.getTime() - inbox.createdAt.getTime()) / 1000);
}

/** The create answer for an inbox. */
export function presentInbox(inbox: Inbox): Static<typeof InboxResponse> {
  return {
    success: true,
    email: `${inbox.username}@${inbox.domain}`,
    username: inbox.username,
    domain: inbox.domain,
    ttl: lifetimeSeconds(inbox),
    expires_at: inbox.expiresAt.toISOString(),
    created_at: inbox.createdAt.toISOString(),
  };
}

/** An inbox as listed by GET /api/session. */
export function presentInboxSummary(inbox: InboxWithCount) {
  return {
    email: `${inbox.username}@${inbox.domain}`,
    username: inbox.username,
    domain: inbox.domain,
    ttl: lifetimeSeconds(inbox),
    created_at: inbox.createdAt.toISOString(),
    expires_at: inbox.expiresAt.toISOString(),
    count: inbox.messageCount,
  };
}

/** A message as the check endpoint shows it. */
export function presentMessage(message: MessageView): Static<typeof Message> {
  return {
    ...presentMessageFields(message),
    truncated: message.truncated,
  };
}

/**
 * A listed message's JSON, as the check answers and the event streams write it: built once
 * per message and kept in `source` (a ListingJsonCache: one per route, a bounded map by
 * message id), so the checks, waits and streams of one inbox that share a read
 * (services/shared-reads.ts) serialise each message once between them. Native
 * JSON.stringify: the schema serialiser escapes long strings in a JS loop, ~10 times slower
 * on 256 KiB bodies. A WeakMap kept for a whole route instead (every message listed became
 * an ephemeron of one old-space table) coincided with long-polls waiting 0.5-1.2 s in 4 of 10
 * quick benchmark runs, against none in 8 runs without it and none in 4 with the fragments
 * (docs/benchmarks.md).
 */
export function messageJson(source: Pick<ListingJsonCache, 'cached' | 'build'>): (message: MessageView) => string {
  return (message) => (source.cached(message.id) ?? source.build(message)).text;
}

/** The check answer of a page read as fragments (ListingJsonCache's items): the same JSON as presentCheck. */
export function renderCheckPage(page: CheckPage<ListedFragment>): string {
  return checkAnswerJson(page.messages.map((fragment) => fragment.text), page.hasMore);
}

/** CheckResponse around messages already in JSON. */
function checkAnswerJson(messages: readonly string[], hasMore: boolean): string {
  return `{"success":true,"count":${messages.length},"emails":[${messages.join(',')}],"has_more":${hasMore}}`;
}

/** The fields a message has in a listing and in the detail. */
function presentMessageFields(message: MessageView) {
  return {
    id: message.id,
    from: message.from,
    to: message.to,
    recipient: message.recipient,
    subject: message.subject,
    body: message.text,
    html: message.html,
    date: message.receivedAt.toISOString(),
    attachments: message.attachments.map((a) => ({ id: a.id, filename: a.filename, content_type: a.contentType, size: a.size })),
    ...presentInsights(message),
  };
}

/** The check answer. */
export function presentCheck(page: CheckPage<MessageView>): Static<typeof CheckResponse> {
  return { success: true, count: page.messages.length, emails: page.messages.map(presentMessage), has_more: page.hasMore };
}

/** One message with headers. */
export function presentMessageDetail(message: MessageDetail): Static<typeof MessageDetailResponse> {
  return {
    success: true,
    ...presentMessageFields(message),
    envelope_from: message.envelopeFrom,
    size: message.size,
    headers: message.headers,
  };
}

/** What a message tells: codes, links and sender authentication (docs/api.md "What a message tells"). */
export function presentInsights(message: Pick<MessageView, 'codes' | 'links' | 'auth'>) {
  return {
    codes: [...message.codes],
    links: message.links.map((link) => ({ url: link.url, text: link.text })),
    auth: message.auth,
  };
}
