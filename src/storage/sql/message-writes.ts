import type { Kysely } from 'kysely';
import { newId } from '../../domain/ids.js';
import { copyVerdict } from '../../domain/plan.js';
import type { NewMessage } from '../../domain/types.js';
import type { InboxUsage, InsertOutcome, StorePolicy } from '../../ports/mail-store.js';
import type { Database } from './database.js';
import { chunks, MAX_IDS_PER_STATEMENT } from './deletions.js';
import type { SqlDialect } from './dialect.js';
import { notifyInTransaction } from './inbox-notify.js';
import { addUsage } from './inbox-usage.js';
import { toBlob, toMillis, toUsage } from './row-mappers.js';

/** Rows per multi-row INSERT: 100 rows × ≤ 8 columns stays far below every bind limit. */
export const INSERT_ROWS_PER_STATEMENT = 100;

/** What became of a message per inbox, in the order the inboxes were given. */
export type DeliveryOutcomes = Map<string, InsertOutcome>;

/**
 * Stores a received message once (content + attachments) and one copy per inbox that is
 * still there, active and under its quota, in one transaction: when it resolves, every copy
 * is committed. Returns an outcome per inbox, in the order given; duplicates get one copy.
 */
export function insertMessageCopies(
  db: Kysely<Database>,
  dialect: SqlDialect,
  delivery: MessageDelivery,
): Promise<DeliveryOutcomes> {
  if (delivery.inboxIds.length === 0) return Promise.resolve(new Map());
  return db.transaction().execute((trx) => writeMessageCopies(trx, dialect, delivery));
}

/** One message for insertMessageGroup: the message, the inboxes it goes to and their rules. */
export interface MessageDelivery {
  message: NewMessage;
  inboxIds: readonly string[];
  policy: StorePolicy;
}

/**
 * Stores several messages in one transaction (group commit, see GroupCommitQueue): what
 * insertMessageCopies does for each, with one commit for all. Results in the given order.
 */
export function insertMessageGroup(
  db: Kysely<Database>,
  dialect: SqlDialect,
  deliveries: readonly MessageDelivery[],
): Promise<DeliveryOutcomes[]> {
  return db.transaction().execute(async (trx) => {
    const results: DeliveryOutcomes[] = [];
    // One after another in the one transaction: each item counts the copies the items
    // before it wrote, so a group never pushes an inbox past its quota either.
    for (const delivery of deliveries) results.push(await writeMessageCopies(trx, dialect, delivery));
    return results;
  });
}

/** The statements of insertMessageCopies, inside the caller's transaction. */
async function writeMessageCopies(trx: Kysely<Database>, dialect: SqlDialect, delivery: MessageDelivery): Promise<DeliveryOutcomes> {
  const { message, inboxIds, policy } = delivery;
  const wanted = [...new Set(inboxIds)];
  if (wanted.length === 0) return new Map();
  const found = new Map<string, { expiresAt: number; licensed: boolean; usage: InboxUsage }>();
  for (const ids of chunks([...wanted].sort(), MAX_IDS_PER_STATEMENT)) {
    // PostgreSQL: lock the inboxes (in id order, so two deliveries never deadlock). It keeps
    // a delete or sweep from removing an inbox under us, and it serialises deliveries per
    // inbox, so seq is drawn in commit order: with a shared lock two deliveries could take
    // seq 10 and 11 and commit 11 first, and a poll `since` 11 would never see 10. SQLite
    // gets the same order from its one writer. NO KEY: the messages foreign key check
    // (FOR KEY SHARE) is not blocked by it.
    // The lock also makes the quota check below exact: a second delivery to the inbox waits
    // here and then reads the usage counters the first one committed (READ COMMITTED reads
    // the newest version of a row it has locked). The counters' update below needs no other
    // lock: this transaction holds these rows already.
    const rows = await trx
      .selectFrom('inboxes')
      .select(['id', 'expires_at', 'license_id', 'message_count', 'byte_count'])
      .where('id', 'in', ids)
      .$if(dialect.rowLocks, (q) => q.orderBy('id').forNoKeyUpdate())
      .execute();
    for (const row of rows) found.set(row.id, { expiresAt: Number(row.expires_at), licensed: row.license_id !== null, usage: toUsage(row) });
  }
  const outcomes = new Map<string, InsertOutcome>();
  const now = toMillis(policy.now);
  const unlimited = new Set(policy.unlimited ?? []);
  const size = message.raw.byteLength;
  const targets: string[] = [];
  for (const id of wanted) {
    const inbox = found.get(id);
    const verdict = copyVerdict(inbox, now, unlimited.has(id) ? null : (inbox?.usage ?? null), size, policy);
    // A stored copy's outcome is set below, once it has an id; setting it now keeps the given order.
    outcomes.set(id, verdict === 'store' ? { status: 'missing' } : { status: verdict });
    if (verdict === 'store') targets.push(id);
  }
  // Nothing to deliver to: store nothing rather than an orphaned content.
  if (targets.length === 0) return outcomes;

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
  await trx
    .insertInto('message_insights')
    .values({
      content_id: contentId,
      codes_json: JSON.stringify(parsed.codes),
      links_json: JSON.stringify(parsed.links),
      auth_json: message.auth === undefined || message.auth === null ? null : JSON.stringify(message.auth),
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
  const copies = targets.map((inboxId) => ({
    id: newId(),
    inbox_id: inboxId,
    content_id: contentId,
    received_at: receivedAt,
    recipient: message.recipients?.get(inboxId) ?? '',
  }));
  for (const batch of chunks(copies, INSERT_ROWS_PER_STATEMENT)) {
    await trx.insertInto('messages').values(batch).execute();
  }
  await addUsage(trx, targets, size);
  for (const copy of copies) outcomes.set(copy.inbox_id, { status: 'stored', messageId: copy.id });
  // Other nodes' waiters and streams hear of the copies when (and only if) this commits.
  await notifyInTransaction(trx, dialect, copies.map((copy) => ({ type: 'message', inboxId: copy.inbox_id })));
  return outcomes;
}
