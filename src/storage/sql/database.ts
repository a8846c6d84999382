import type { ColumnType, Generated, GeneratedAlways } from 'kysely';

/**
 * Epoch milliseconds: portable (SQLite integer, PostgreSQL bigint) and cheap to compare.
 * PostgreSQL's driver returns int8 as a string, so reads are typed `number | string`.
 */
export type Millis = ColumnType<number | string, number, number>;

/** A count or other int8 the database computes (PostgreSQL returns it as a string). */
export type DbCount = number | string | bigint;

/** An anonymous client identity, stored by the hash of its cookie. */
export interface SessionsTable {
  id: string;
  token_hash: string;
  created_at: Millis;
  expires_at: Millis;
  license_id: string | null;
}

/** Premium licenses; only the hash of the key. */
export interface LicensesTable {
  id: string;
  key_hash: string;
  created_at: Millis;
  valid_until: Millis;
  max_sessions: number;
  revoked_at: Millis | null;
}

/** Receiving addresses; username unique across domains. */
export interface InboxesTable {
  id: string;
  username: string;
  domain: string;
  created_at: Millis;
  expires_at: Millis;
  session_id: string | null;
  license_id: string | null;
  /** Copies the inbox holds (migration 0005-inbox-usage); exact at every commit. */
  message_count: ColumnType<number, number | undefined, number>;
  /** Raw bytes of those copies (sum of their contents' size); int8 on PostgreSQL, read as a string there. */
  byte_count: ColumnType<DbCount, number | undefined, number>;
}

/** One row per received message, shared by its copies in several inboxes. */
export interface ContentsTable {
  id: string;
  envelope_from: string;
  from_header: string;
  to_header: string;
  subject: string;
  text_body: string;
  html_body: string | null;
  headers_json: string;
  message_id_header: string | null;
  size: number;
  /** Lets readers skip the attachments query for the common message without any. */
  attachment_count: number;
  created_at: Millis;
  raw: Uint8Array;
}

/** One copy of a content in one inbox. */
export interface MessagesTable {
  /** Ordering and `since` only; never shown (public ids are random). */
  seq: GeneratedAlways<number | string>;
  id: string;
  inbox_id: string;
  content_id: string;
  received_at: Millis;
  /** The envelope address this copy was delivered to (migration 0003-message-recipient); '' for older rows. */
  recipient: Generated<string>;
  /**
   * The match keys of the filters (migration 0006-filter-keys, domain/match-key.ts): of the
   * recipient (the inbox address when it is ''), of the From header and envelope sender, of
   * the subject. NULL for a copy a node of an earlier release stored.
   */
  to_key: ColumnType<string | null, string | null | undefined, string | null>;
  from_key: ColumnType<string | null, string | null | undefined, string | null>;
  subject_key: ColumnType<string | null, string | null | undefined, string | null>;
}

/** Attachments belong to a content, so copies of a message share them. */
export interface AttachmentsTable {
  id: string;
  content_id: string;
  position: number;
  filename: string;
  content_type: string;
  size: number;
  /** The bytes; empty when the attachment is a range of the content's raw message (below). */
  data: Uint8Array;
  /** The range of `contents.raw` the bytes decode from (migration 0008), or NULL. */
  raw_start: number | null;
  raw_end: number | null;
  raw_encoding: string | null;
}

/** What a message tells, per content (migration 0004; JSON text columns). */
export interface MessageInsightsTable {
  content_id: string;
  codes_json: string;
  links_json: string;
  auth_json: string | null;
}

/** The schema as Kysely sees it. */
export interface Database {
  sessions: SessionsTable;
  licenses: LicensesTable;
  inboxes: InboxesTable;
  contents: ContentsTable;
  messages: MessagesTable;
  attachments: AttachmentsTable;
  message_insights: MessageInsightsTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
}

/** An inbox's webhook (migration 0007-webhooks). */
export interface WebhooksTable {
  inbox_id: string;
  url: string;
  secret: string;
  created_at: Millis;
}

/** A delivery still owed (the outbox). */
export interface WebhookDeliveriesTable {
  id: string;
  inbox_id: string;
  message_id: string | null;
  event: string;
  attempts: ColumnType<number, number | undefined, number>;
  due_at: Millis;
  lease_token: string | null;
  created_at: Millis;
}

/** One attempt of a delivery, kept for GET …/webhook. */
export interface WebhookAttemptsTable {
  seq: GeneratedAlways<number | string>;
  inbox_id: string;
  delivery_id: string;
  message_id: string | null;
  attempt: number;
  status: number | null;
  error: string | null;
  at: Millis;
}
