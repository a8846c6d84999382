/** Shapes of the public JSON API (docs/api.md) that the page reads. */

/** An inbox as `GET /api/create` returns it. */
export interface Inbox {
  email: string;
  username: string;
  domain: string;
  ttl: number;
  expires_at: string;
  created_at: string;
}

/** An inbox as listed by `GET /api/session` (with its message count). */
export interface InboxSummary extends Inbox {
  count: number;
}

/** Limits of the session's mode. */
export interface Limits {
  max_inboxes: number;
  ttl: number;
  custom_usernames: boolean;
}

/** `GET /api/session`. */
export interface SessionInfo {
  premium: boolean;
  premium_until: string | null;
  limits: Limits;
  inboxes: InboxSummary[];
}

/** One attachment of a message. */
export interface Attachment {
  id: string;
  filename: string;
  content_type: string;
  size: number;
}

/** A message as `GET /api/check/<username>` returns it. */
export interface Message {
  id: string;
  from: string;
  to: string;
  subject: string;
  body: string;
  html: string | null;
  date: string;
  attachments: Attachment[];
  /** A check listing cut `body` or `html`; `GET /api/messages/<id>` has the whole text. */
  truncated?: boolean;
}

/** `POST /api/premium/redeem`. */
export interface RedeemResult {
  premium: true;
  premium_until: string;
  limits: Limits;
}
