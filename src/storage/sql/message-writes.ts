import type { Kysely } from 'kysely';
import { newId } from '../../domain/ids.js';
import type { NewMessage } from '../../domain/types.js';
import type { Database } from './database.js';
import { chunks, MAX_IDS_PER_STATEMENT } from './deletions.js';
import type { SqlDialect } from './dialect.js';
import { toBlob, toMillis } from './row-mappers.js';

/** Rows per multi-row INSERT: 100 rows × ≤ 8 columns stays far below every bind limit. */
export const INSERT_ROWS_PER_STATEMENT = 100;

/**
 * Stores a received message once (content + attachments) and one copy per inbox that still
 * exists, in one transaction: when it resolves, every copy is committed. Returns inbox id →
 * new message id, in the order the inboxes were given; duplicates get one copy.
 */
export function insertMessageCopies(
  db: Kysely<Database>,
  dialect: SqlDialect,
  message: NewMessage,
  inboxIds: readonly string[],
): Promise<Map<string, string>> {
  if (inboxIds.length === 0) return Promise.resolve(new Map());
  return db.transaction().execute((trx) => writeMessageCopies(trx, dialect, message, inboxIds));
}

/** One message for insertMessageGroup: the message and the inboxes it goes to. */
export interface MessageDelivery {
  message: NewMessage;
  inboxIds: readonly string[];
}

/**
 * Stores several messages in one transaction (group commit, see GroupCommitQueue): what
 * insertMessageCopies does for each, with one commit for all. Results in the given order.
 */
export function insertMessageGroup(
  db: Kysely<Database>,
  dialect: SqlDialect,
  deliveries: readonly MessageDelivery[],
): Promise<Array<Map<string, string>>> {
  return db.transaction().execute(async (trx) => {
    const results: Array<Map<string, string>> = [];
    for (const { message, inboxIds } of deliveries) results.push(await writeMessageCopies(trx, dialect, message, inboxIds));
    return results;
  });
}

/** The statements of insertMessageCopies, inside the caller's transaction. */
async function writeMessageCopies(
  trx: Kysely<Database>,
  dialect: SqlDialect,
  message: NewMessage,
  inboxIds: readonly string[],
): Promise<Map<string, string>> {
  const wanted = [...new Set(inboxIds)];
  if (wanted.length === 0) return new Map();
  const found = new Set<string>();
  for (const ids of chunks([...wanted].sort(), MAX_IDS_PER_STATEMENT)) {
    // PostgreSQL: lock the inboxes (in id order, so two deliveries never deadlock). It keeps
    // a delete or sweep from removing an inbox under us, and it serialises deliveries per
    // inbox, so seq is drawn in commit order: with a shared lock two deliveries could take
    // seq 10 and 11 and commit 11 first, and a poll `since` 11 would never see 10. SQLite
    // gets the same order from its one writer. NO KEY: the messages foreign key check
    // (FOR KEY SHARE) is not blocked by it.
    const rows = await trx
      .selectFrom('inboxes')
      .select('id')
      .where('id', 'in', ids)
      .$if(dialect.rowLocks, (q) => q.orderBy('id').forNoKeyUpdate())
      .execute();
    for (const row of rows) found.add(row.id);
  }
  const targets = wanted.filter((id) => found.has(id));
  // Nothing to deliver to: store nothing rather than an orphaned content.
  if (targets.length === 0) return new Map<string, string>();

  const { parsed } = message;
  const contentId = newId();
  const receivedAt = toMillis(message.receivedAt);
  await trx
    .insertInto('contents')
    .values({
      id: contentId,
      envelope_from: message.envelopeFrom,
      from_header: parsed.from,
      to_header: parsed.to,
      subject: parsed.subject,
      text_body: parsed.text,
      html_body: parsed.html,
      headers_json: JSON.stringify(parsed.headers.map(({ name, value }) => ({ name, value }))),
      message_id_header: parsed.messageId,
      size: message.raw.byteLength,
      attachment_count: parsed.attachments.length,
      created_at: receivedAt,
      raw: toBlob(message.raw),
    })
    .execute();
  const attachments = parsed.attachments.map((attachment, position) => ({
    id: newId(),
    content_id: contentId,
    position,
    filename: attachment.filename,
    content_type: attachment.contentType,
    size: attachment.content.byteLength,
    data: toBlob(attachment.content),
  }));
  for (const batch of chunks(attachments, INSERT_ROWS_PER_STATEMENT)) {
    await trx.insertInto('attachments').values(batch).execute();
  }
  const copies = targets.map((inboxId) => ({ id: newId(), inbox_id: inboxId, content_id: contentId, received_at: receivedAt }));
  for (const batch of chunks(copies, INSERT_ROWS_PER_STATEMENT)) {
    await trx.insertInto('messages').values(batch).execute();
  }
  return new Map(copies.map((copy) => [copy.inbox_id, copy.id]));
}
