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

/** One check's verdict (RFC 8601 result words). */
export type AuthResult = 'pass' | 'fail' | 'softfail' | 'neutral' | 'none' | 'temperror' | 'permerror';

/** Sender authentication of a message, checked by the server while it received it. */
export interface MessageAuth {
  spf: { result: AuthResult; domain: string };
  dkim: Array<{ result: AuthResult; domain: string; selector: string }>;
  dmarc: { result: AuthResult; domain: string; policy: 'none' | 'quarantine' | 'reject' | null };
  arc: { result: AuthResult };
}

/** A link found in a message, with its visible text. */
export interface MessageLink {
  url: string;
  text: string;
}

/**
 * A message as `GET /api/check/<username>`, the event stream and `GET /api/messages/<id>`
 * return it. The optional fields are absent on an older server; the page shows nothing then.
 */
export interface Message {
  id: string;
  from: string;
  to: string;
  subject: string;
  body: string;
  html: string | null;
  date: string;
  attachments: Attachment[];
  /** The envelope address this copy was delivered to, `+tag` kept. */
  recipient?: string;
  /** One-time codes, most likely first. */
  codes?: string[];
  links?: MessageLink[];
  /** `null` when the server does not check senders. */
  auth?: MessageAuth | null;
  /** `body`/`html` were cut in a listing; `GET /api/messages/<id>` has the whole text. */
  truncated?: boolean;
}

/** `GET /api/check/<username>`. */
export interface CheckResult {
  count: number;
  emails: Message[];
  /** Older messages were left out (absent on an older server). */
  has_more?: boolean;
}

/** `POST /api/premium/redeem`. */
export interface RedeemResult {
  premium: true;
  premium_until: string;
  limits: Limits;
}
