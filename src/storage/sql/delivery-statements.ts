/**
 * The write path of a delivery, once for both writers: the columns each table gets and the
 * values that fill them, and the statements built from those lists in each dialect. The
 * SQLite writer thread (sqlite-delivery.ts) runs one statement per row; PostgreSQL's group
 * writer (postgres-delivery.ts) one statement per delivery, with the rows as arrays. A column
 * added to a delivery is added here, and both writers write it.
 *
 * Loaded by the SQLite writer thread: it imports only dependency-free modules of ours, with
 * `.ts` specifiers (sqlite-delivery.ts says why).
 */
import { fromMatchKey, matchKey } from '../../domain/match-key.ts';
import type { RawRange } from '../../domain/raw-range.ts';
import type { NewMessage } from '../../domain/types.ts';

/** The columns a delivery writes, per table, in the order their values are bound. */
export const DELIVERY_COLUMNS = {
  contents: [
    'id',
    'envelope_from',
    'from_header',
    'to_header',
    'subject',
    'text_body',
    'html_body',
    'headers_json',
    'message_id_header',
    'size',
    'attachment_count',
    'created_at',
    'raw',
  ],
  message_insights: ['content_id', 'codes_json', 'links_json', 'auth_json'],
  // With the range of the raw message the bytes decode from (migration 0008-attachment-ranges).
  attachments: ['id', 'content_id', 'position', 'filename', 'content_type', 'size', 'data', 'raw_start', 'raw_end', 'raw_encoding'],
  // With the match keys of the filters (migration 0006-filter-keys).
  messages: ['id', 'inbox_id', 'content_id', 'received_at', 'recipient', 'to_key', 'from_key', 'subject_key'],
} as const;

/** The inbox columns a delivery decides by: copyVerdict's (expiry, license), the usage counters (migration 0005-inbox-usage) and the address (the `to` match key). */
export const DELIVERY_INBOX_COLUMNS = 'expires_at, license_id, message_count, byte_count, username, domain';

/** `insert into <table> (<its delivery columns>)`: the head of every insert of a delivery. */
export function insertInto(table: keyof typeof DELIVERY_COLUMNS): string {
  return `insert into ${table} (${DELIVERY_COLUMNS[table].join(', ')})`;
}

/** The usage counters of the inboxes `where` names gain one copy of `bytes` (inbox-usage.ts's addUsage), in the copy's transaction. */
export function addUsage(bytes: string, where: string): string {
  return `update inboxes set message_count = message_count + 1, byte_count = byte_count + ${bytes} where ${where}`;
}

/**
 * The head of the insert of the webhook delivery a copy owes (migration 0007-webhooks): both
 * writers follow it with a SELECT from the inbox's `webhooks` row, so a copy in an inbox
 * without a webhook owes nothing, and the delivery commits with the copy or not at all.
 */
export const OWE_WEBHOOK = 'insert into webhook_deliveries (id, inbox_id, message_id, event, attempts, due_at, created_at)';

/** One `?` per column of `table`: SQLite's values list of one row. */
function sqliteValues(table: keyof typeof DELIVERY_COLUMNS): string {
  return `values (${DELIVERY_COLUMNS[table].map(() => '?').join(', ')})`;
}

/** The statements of a delivery in SQLite's dialect, one row each (sqlite-delivery.ts). */
export const SQLITE_DELIVERY_SQL = {
  // The inbox with its stored usage and its address: one primary-key read.
  inbox: `select ${DELIVERY_INBOX_COLUMNS} from inboxes where id = ?`,
  content: `${insertInto('contents')} ${sqliteValues('contents')}`,
  insights: `${insertInto('message_insights')} ${sqliteValues('message_insights')}`,
  attachment: `${insertInto('attachments')} ${sqliteValues('attachments')}`,
  copy: `${insertInto('messages')} ${sqliteValues('messages')}`,
  addUsage: addUsage('?', 'id = ?'),
  // Delivery id, message id, due and created (the delivery's `now`), inbox id.
  oweWebhook: `${OWE_WEBHOOK} select ?, inbox_id, ?, 'message.received', 0, ?, ? from webhooks where inbox_id = ?`,
} as const;

/** A received message as the columns of its `contents` and `message_insights` rows, ready to bind (besides the content's id). */
export interface ContentColumns {
  envelopeFrom: string;
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string | null;
  headersJson: string;
  messageId: string | null;
  raw: Uint8Array;
  receivedAt: number;
  codesJson: string;
  linksJson: string;
  authJson: string | null;
  attachments: AttachmentColumns[];
}

/**
 * An attachment as stored: its bytes in `data`, or, when it is a range of the raw message
 * (domain/raw-range.ts), that range and no bytes, so the message's bytes are stored once.
 */
export interface AttachmentColumns {
  filename: string;
  contentType: string;
  size: number;
  data: Uint8Array;
  range: RawRange | null;
}

const NO_BYTES = new Uint8Array(0);

/** The column values of a message's content, the same for both writers. */
export function contentColumns(message: NewMessage): ContentColumns {
  const { parsed } = message;
  return {
    envelopeFrom: message.envelopeFrom,
    from: parsed.from,
    to: parsed.to,
    subject: parsed.subject,
    text: parsed.text,
    html: parsed.html,
    headersJson: JSON.stringify(parsed.headers.map(({ name, value }) => ({ name, value }))),
    messageId: parsed.messageId,
    raw: message.raw,
    receivedAt: message.receivedAt.getTime(),
    codesJson: JSON.stringify(parsed.codes),
    linksJson: JSON.stringify(parsed.links),
    authJson: message.auth === undefined || message.auth === null ? null : JSON.stringify(message.auth),
    attachments: parsed.attachments.map(({ filename, contentType, content, rawRange }) => ({
      filename,
      contentType,
      size: content.byteLength,
      data: rawRange === null || rawRange === undefined ? content : NO_BYTES,
      range: rawRange ?? null,
    })),
  };
}

/**
 * The `contents` row of `content` under `contentId`, in DELIVERY_COLUMNS.contents order;
 * `blob` turns bytes into what the driver binds.
 */
export function contentRow<B>(contentId: string, content: ContentColumns, blob: (bytes: Uint8Array) => B): unknown[] {
  const { envelopeFrom, from, to, subject, text, html, headersJson, messageId, raw, receivedAt, attachments } = content;
  return [contentId, envelopeFrom, from, to, subject, text, html, headersJson, messageId, raw.byteLength, attachments.length, receivedAt, blob(raw)];
}

/** The content's match keys of From and subject (domain/match-key.ts), folded once per content. */
export function contentKeys(content: Pick<ContentColumns, 'from' | 'envelopeFrom' | 'subject'>): { fromKey: string; subjectKey: string } {
  return { fromKey: fromMatchKey(content.from, content.envelopeFrom), subjectKey: matchKey(content.subject) };
}

/** A copy's `to` match key: of its envelope recipient, or the inbox's address when that is unknown. */
export function copyToKey(recipient: string, inboxAddress: string): string {
  return matchKey(recipient !== '' ? recipient : inboxAddress);
}
