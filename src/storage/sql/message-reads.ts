import { sql, type ExpressionBuilder, type Kysely } from 'kysely';
import { cutText } from '../../domain/text-cut.js';
import { decodeRawRange, isRawRangeEncoding } from '../../domain/raw-range.js';
import type { AttachmentContent, AttachmentInfo, MessageView } from '../../domain/types.js';
import type { Database } from './database.js';
import { displayFrom, displayTo, fromBlob, parseAuth, parseCodes, parseLinks, toDate } from './row-mappers.js';

/**
 * Most attachments listed per message: ten times what the parser keeps (maxAttachments in
 * src/mail/mail-limits.ts), so it never cuts a real list, yet bounds a listing whatever is
 * stored.
 */
export const MAX_LISTED_ATTACHMENTS = 1000;

/** Messages joined with their content and inbox address: every column but the bodies and raw bytes. */
function messageHead(db: Kysely<Database>) {
  return db
    .selectFrom('messages as m')
    .innerJoin('contents as c', 'c.id', 'm.content_id')
    .innerJoin('inboxes as i', 'i.id', 'm.inbox_id')
    // Left: contents received before migration 0004 have no insights row.
    .leftJoin('message_insights as x', 'x.content_id', 'm.content_id')
    .select(['x.codes_json', 'x.links_json', 'x.auth_json'])
    .select([
      'm.seq',
      'm.id',
      'm.inbox_id',
      'm.content_id',
      'm.received_at',
      'm.recipient',
      'c.envelope_from',
      'c.from_header',
      'c.to_header',
      'c.subject',
      'c.size',
      'c.attachment_count',
      'i.username',
      'i.domain',
    ]);
}

/** Messages joined with their content (whole bodies, minus the raw bytes) and the inbox address. */
export function messageQuery(db: Kysely<Database>) {
  return messageHead(db).select(['c.text_body', 'c.html_body']);
}

/**
 * Messages with their bodies cut in SQL to their first `cutChars` characters (SQLite's substr
 * and PostgreSQL's substr count characters on text), plus each body's whole length in bytes
 * (octet_length: on SQLite read from the record header, without loading the value). A
 * character is at least one byte, so the first N characters hold the first N bytes: the
 * exact cut at N bytes is then made in JS on at most 4 × N bytes (cutText).
 */
export function messageCutQuery(db: Kysely<Database>, cutChars: number) {
  return messageHead(db).select([
    sql<string>`substr(${sql.ref('c.text_body')}, 1, ${cutChars})`.as('text_body'),
    sql<string | null>`substr(${sql.ref('c.html_body')}, 1, ${cutChars})`.as('html_body'),
    sql<number>`octet_length(${sql.ref('c.text_body')})`.as('text_bytes'),
    sql<number | null>`octet_length(${sql.ref('c.html_body')})`.as('html_bytes'),
  ]);
}

/** The seq of message `sinceId` of the inbox, or 0 when it is not one of its messages. */
export function seqOf(eb: ExpressionBuilder<MessageScope, 'm'>, inboxId: string, sinceId: string) {
  return eb.fn.coalesce(
    eb.selectFrom('messages as s').select('s.seq').where('s.id', '=', sinceId).where('s.inbox_id', '=', inboxId),
    eb.lit(0),
  );
}

/** The seq of message `messageId` of the inbox; NULL when it is not one of its messages (compares as no row). */
export function anchorSeq(eb: ExpressionBuilder<MessageScope, 'm'>, inboxId: string, messageId: string) {
  return eb.selectFrom('messages as s').select('s.seq').where('s.id', '=', messageId).where('s.inbox_id', '=', inboxId);
}

/** The tables messageQuery selects from, as Kysely names them. */
type MessageScope = Database & { m: Database['messages']; c: Database['contents']; i: Database['inboxes']; x: Database['message_insights'] };

/** One row of messageQuery. */
export type MessageRow = Awaited<ReturnType<ReturnType<typeof messageQuery>['execute']>>[number];
/** One row of messageCutQuery. */
export type MessageCutRow = Awaited<ReturnType<ReturnType<typeof messageCutQuery>['execute']>>[number];

/** Whether message `messageId` is one of the inbox's. */
export async function isMessageOf(db: Kysely<Database>, inboxId: string, messageId: string): Promise<boolean> {
  const row = await db.selectFrom('messages').select('id').where('id', '=', messageId).where('inbox_id', '=', inboxId).executeTakeFirst();
  return row !== undefined;
}

/** One message with its headers, for the detail view. */
export async function findMessageRow(
  db: Kysely<Database>,
  messageId: string,
): Promise<(MessageRow & { headers_json: string }) | undefined> {
  return messageQuery(db).select('c.headers_json').where('m.id', '=', messageId).executeTakeFirst();
}

/** Attachment metadata of a few contents (a batch of readPage's bodies), each list in message order. */
export async function attachmentsOfContents(db: Kysely<Database>, contentIds: readonly string[]): Promise<Map<string, AttachmentInfo[]>> {
  if (contentIds.length === 0) return new Map();
  const found = await db
    .selectFrom('attachments')
    .select(['id', 'content_id', 'filename', 'content_type', 'size'])
    .where('content_id', 'in', [...contentIds])
    .orderBy('content_id')
    .orderBy('position')
    .limit(contentIds.length * MAX_LISTED_ATTACHMENTS)
    .execute();
  return groupByContent(found);
}

/** Attachment rows (in message order) as lists per content. */
function groupByContent(
  rows: ReadonlyArray<{ id: string; content_id: string; filename: string; content_type: string; size: number | string }>,
): Map<string, AttachmentInfo[]> {
  const byContent = new Map<string, AttachmentInfo[]>();
  for (const row of rows) {
    const list = byContent.get(row.content_id) ?? [];
    list.push({ id: row.id, filename: row.filename, contentType: row.content_type, size: Number(row.size) });
    byContent.set(row.content_id, list);
  }
  return byContent;
}

/** Attachment metadata of one content, in their order in the message. */
export async function attachmentsOfContent(db: Kysely<Database>, contentId: string): Promise<AttachmentInfo[]> {
  const rows = await db
    .selectFrom('attachments')
    .select(['id', 'filename', 'content_type', 'size'])
    .where('content_id', '=', contentId)
    .orderBy('position')
    .limit(MAX_LISTED_ATTACHMENTS)
    .execute();
  return rows.map((row) => ({ id: row.id, filename: row.filename, contentType: row.content_type, size: Number(row.size) }));
}

/** A cut row as a listed message: the exact cut at `maxFieldBytes` bytes of UTF-8 (docs/api.md, check). */
export function toCutMessageView(row: MessageCutRow, attachments: AttachmentInfo[], maxFieldBytes: number): MessageView {
  const text = Number(row.text_bytes) > maxFieldBytes ? cutText(row.text_body, maxFieldBytes).text : row.text_body;
  const html = row.html_body !== null && Number(row.html_bytes) > maxFieldBytes ? cutText(row.html_body, maxFieldBytes).text : row.html_body;
  const truncated = Number(row.text_bytes) > maxFieldBytes || Number(row.html_bytes ?? 0) > maxFieldBytes;
  return { ...toMessageView({ ...row, text_body: text, html_body: html }, attachments), truncated };
}

/** A joined row as the reader's view of one message copy. */
export function toMessageView(row: MessageRow, attachments: AttachmentInfo[]): MessageView {
  return {
    truncated: false,
    id: row.id,
    inboxId: row.inbox_id,
    from: displayFrom(row.from_header, row.envelope_from),
    to: displayTo(row.to_header, row.username, row.domain),
    recipient: row.recipient !== '' ? row.recipient : `${row.username}@${row.domain}`,
    subject: row.subject,
    text: row.text_body,
    html: row.html_body,
    receivedAt: toDate(row.received_at),
    size: Number(row.size),
    attachments,
    codes: parseCodes(row.codes_json),
    links: parseLinks(row.links_json),
    auth: parseAuth(row.auth_json),
  };
}

/** The original bytes of a message copy and the inbox holding it. */
export async function findRaw(db: Kysely<Database>, messageId: string): Promise<{ inboxId: string; raw: Uint8Array } | null> {
  const row = await db
    .selectFrom('messages as m')
    .innerJoin('contents as c', 'c.id', 'm.content_id')
    .select(['m.inbox_id', 'c.raw'])
    .where('m.id', '=', messageId)
    .executeTakeFirst();
  return row === undefined ? null : { inboxId: row.inbox_id, raw: fromBlob(row.raw) };
}

/** An attachment with its bytes, only when it belongs to that message's content. */
export async function findAttachmentContent(
  db: Kysely<Database>,
  messageId: string,
  attachmentId: string,
): Promise<AttachmentContent | null> {
  // The join on content_id is the ownership check. An attachment kept as a range of the raw
  // message (migration 0008) reads only that range: substr counts from 1 on both databases.
  const row = await db
    .selectFrom('messages as m')
    .innerJoin('attachments as a', 'a.content_id', 'm.content_id')
    .innerJoin('contents as c', 'c.id', 'm.content_id')
    .select(['m.id as message_id', 'm.inbox_id', 'a.id', 'a.filename', 'a.content_type', 'a.size', 'a.data', 'a.raw_encoding'])
    .select(sql<Uint8Array | null>`case when a.raw_start is null then null else substr(c.raw, a.raw_start + 1, a.raw_end - a.raw_start) end`.as('range_bytes'))
    .where('m.id', '=', messageId)
    .where('a.id', '=', attachmentId)
    .executeTakeFirst();
  if (row === undefined) return null;
  const encoding = row.raw_encoding;
  const content = row.range_bytes !== null && isRawRangeEncoding(encoding) ? decodeRawRange(fromBlob(row.range_bytes), encoding) : fromBlob(row.data);
  return {
    id: row.id,
    filename: row.filename,
    contentType: row.content_type,
    size: Number(row.size),
    messageId: row.message_id,
    inboxId: row.inbox_id,
    content,
  };
}
