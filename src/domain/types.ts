import type { RawRange } from './raw-range.js';
import type { MessageLink, SenderAuth } from './sender-auth.js';

/**
 * The records the product is made of, as the services see them. Storage rows and API
 * shapes are mapped from and to these at the adapters' edges.
 */

/** An anonymous client identity, known by the hash of its cookie. */
export interface Session {
  id: string;
  tokenHash: string;
  createdAt: Date;
  /** The cookie stops working after this instant unless renewed by use. */
  expiresAt: Date;
  /** The Premium license redeemed in this session, if any (it may since have expired). */
  licenseId: string | null;
}

/** A Premium license; the key itself is never stored, only its hash. */
export interface License {
  id: string;
  keyHash: string;
  createdAt: Date;
  /** Premium lasts until this instant. */
  validUntil: Date;
  /** How many sessions may redeem the key. */
  maxSessions: number;
  revokedAt: Date | null;
}

/** A license with how many sessions have redeemed it (for `license list`). */
export interface LicenseUsage extends License {
  sessions: number;
  activeInboxes: number;
}

/** A receiving address. Owned by one session, and once premium, by a license too. */
export interface Inbox {
  id: string;
  /** Lowercase local part; unique across all domains among stored inboxes. */
  username: string;
  domain: string;
  createdAt: Date;
  expiresAt: Date;
  sessionId: string | null;
  licenseId: string | null;
}

/** An inbox with the number of messages it holds. */
export interface InboxWithCount extends Inbox {
  messageCount: number;
}

/** Who is asking: a session and, through it, maybe a license. */
export interface Owner {
  sessionId: string;
  licenseId: string | null;
}

/** One header line of a received message, decoded. */
export interface MailHeader {
  name: string;
  value: string;
}

/** An attachment as parsed, before it is stored. */
export interface ParsedAttachment {
  filename: string;
  contentType: string;
  content: Uint8Array;
  /**
   * Where `content` lies, encoded, in the raw message the parser read: the store keeps this
   * range instead of a second copy of the bytes (domain/raw-range.ts). Null when the
   * attachment is not such a range (quoted-printable, inside a nested message, or parsed
   * some other way); absent means null.
   */
  rawRange?: RawRange | null;
  contentId: string | null;
  inline: boolean;
}

/** What the MIME parser makes of a raw message (mail/ fills it, never throws). */
export interface ParsedMail {
  /** From header as written (`"Name" <addr>`), or '' when absent. */
  from: string;
  /** To header as written, or '' when absent. */
  to: string;
  subject: string;
  /** Text body; derived from the HTML when there is no text part. */
  text: string;
  /** Sanitised HTML, or null when the message has no HTML part. */
  html: string | null;
  headers: MailHeader[];
  messageId: string | null;
  attachments: ParsedAttachment[];
  /** One-time codes of subject and text, most likely first (computed once, at parse time). */
  codes: string[];
  /** http(s) links of the sanitised HTML, else of the text, in order, without duplicates. */
  links: MessageLink[];
}

/** A message ready to be stored: the parse plus the envelope and the raw bytes. */
export interface NewMessage {
  envelopeFrom: string;
  parsed: ParsedMail;
  raw: Uint8Array;
  receivedAt: Date;
  /** Sender authentication verdicts; null or absent when not checked (MAIL_AUTH=off). */
  auth?: SenderAuth | null;
  /**
   * The envelope address (RCPT TO, lowercase, `+tag` kept) each inbox's copy was delivered
   * to, by inbox id; an inbox missing here gets '' (shown as the inbox address).
   */
  recipients?: ReadonlyMap<string, string>;
}

/** Attachment metadata as listed with a message. */
export interface AttachmentInfo {
  id: string;
  filename: string;
  contentType: string;
  size: number;
}

/** A stored message as a reader sees it. */
export interface MessageView {
  id: string;
  inboxId: string;
  /** From header as written, else the envelope sender. */
  from: string;
  /** To header as written, else the inbox address. */
  to: string;
  /** The envelope address this copy was delivered to (lowercase, `+tag` kept); the inbox address when unknown. */
  recipient: string;
  subject: string;
  text: string;
  html: string | null;
  receivedAt: Date;
  size: number;
  attachments: AttachmentInfo[];
  /** True when `text` or `html` was cut for a listing (the detail always has the whole text). */
  truncated: boolean;
  codes: string[];
  links: MessageLink[];
  auth: SenderAuth | null;
}

/** A message with its headers (message detail). */
export interface MessageDetail extends MessageView {
  envelopeFrom: string;
  headers: MailHeader[];
}

/** A stored attachment with its bytes. */
export interface AttachmentContent extends AttachmentInfo {
  messageId: string;
  inboxId: string;
  content: Uint8Array;
}

/** What one sweep pass deleted. */
export interface SweepCounts {
  inboxes: number;
  messages: number;
  sessions: number;
}
