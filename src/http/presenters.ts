import type { Static } from '@sinclair/typebox';
import type { Inbox, InboxWithCount, MessageDetail, MessageView } from '../domain/types.js';
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
    id: message.id,
    from: message.from,
    to: message.to,
    subject: message.subject,
    body: message.text,
    html: message.html,
    date: message.receivedAt.toISOString(),
    attachments: message.attachments.map((a) => ({ id: a.id, filename: a.filename, content_type: a.contentType, size: a.size })),
    ...presentInsights(message),
  };
}

/** The check answer. */
export function presentCheck(messages: MessageView[]): Static<typeof CheckResponse> {
  return { success: true, count: messages.length, emails: messages.map(presentMessage) };
}

/** One message with headers. */
export function presentMessageDetail(message: MessageDetail): Static<typeof MessageDetailResponse> {
  return {
    success: true,
    ...presentMessage(message),
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
