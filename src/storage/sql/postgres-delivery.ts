/**
 * Deliveries on PostgreSQL, a group per transaction (docs/benchmarks.md "PostgreSQL"): the
 * group commit's batch of deliveries (GroupCommitQueue) is written in one transaction on one
 * pooled connection with a fixed set of named prepared statements (postgres-prepared.ts):
 * BEGIN; one statement locking the inbox rows of the whole group and reading their usage
 * counters; one statement per delivery that stores it (content, insights, attachments, copies
 * and the counters' update, as data-modifying CTEs); one NOTIFY for the group; COMMIT. Before, each delivery was its own
 * transaction of about ten Kysely queries compiled on the main thread, each a round trip.
 *
 * It keeps the rules of MessageDelivery (message-writes.ts), delivery after delivery, as the
 * SQLite writer does (sqlite-delivery.ts); the contract suite holds both to them.
 */
import type pg from 'pg';
import { newId, newTimeOrderedId } from '../../domain/ids.js';
import { copyVerdict } from '../../domain/plan.js';
import type { InboxUsage, InsertOutcome } from '../../ports/mail-store.js';
import { addUsage, contentColumns, contentKeys, contentRow, copyToKey, DELIVERY_COLUMNS, DELIVERY_INBOX_COLUMNS, insertInto, OWE_WEBHOOK } from './delivery-statements.js';
import { encodeInboxEvent, INBOX_EVENTS_CHANNEL } from './inbox-notify.js';
import type { MessageDelivery } from './message-writes.js';
import { releaseClient, runPrepared, type PreparedStatements } from './postgres-prepared.js';
import { toBlob } from './row-mappers.js';

/** The statements of a group, fixed texts (each prepared once per connection). */
export const DELIVERY_SQL = {
  /**
   * The inboxes of the whole group, locked in one statement in id order (the sort happens
   * below the lock, so rows are locked in that order): two groups, on this node or another,
   * and every other writer that locks inboxes in id order, never wait on each other in a
   * cycle. The lock keeps a delete or sweep from removing an inbox under us, and serialises
   * deliveries per inbox, so seq is drawn in commit order (docs/architecture.md "Data model")
   * and the quota read below counts every copy committed before. NO KEY: the messages foreign
   * key check (FOR KEY SHARE) is not blocked by it. The usage counters come with the rows
   * (docs/architecture.md "Inbox usage counters"): READ COMMITTED returns the newest version of
   * a row it has locked, so they count every copy committed before.
   */
  lock: `select id, ${DELIVERY_INBOX_COLUMNS} from inboxes where id = any($1::text[]) order by id for no key update`,
  /**
   * One delivery in one statement: the content, its insights, its attachments and one copy per
   * target inbox. The foreign keys are checked at the end of the statement, when the content
   * row is there. Attachments and copies come as arrays (unnest), so one text serves every
   * count; `with ordinality` numbers the attachments from 1, and the copies are inserted in the
   * order given. The `usage` CTE adds the copies to their inboxes' usage counters (rows this
   * transaction has locked already). Each copy carries the match keys of the filters
   * (migration 0006-filter-keys): its own of the recipient, the content's of From and subject.
   * The tables' columns and the content's values are the SQLite writer's (delivery-statements.ts).
   * The `owed` CTE writes the webhook delivery each copy owes, from its inbox's webhook row, so
   * none without one (migration 0007-webhooks): committed with the copy, or not at all.
   */
  store: `with content as (
            ${insertInto('contents')}
            values (${DELIVERY_COLUMNS.contents.map((_, i) => `$${i + 1}`).join(', ')})
          ), insight as (
            ${insertInto('message_insights')} values ($1, $14, $15, $16)
          ), usage as (
            ${addUsage('$10', 'id = any($23::text[])')}
          ), owed as (
            ${OWE_WEBHOOK}
            select o.id, o.inbox_id, o.message_id, 'message.received', 0, $28::bigint, $28::bigint
            from unnest($29::text[], $23::text[], $22::text[]) as o(id, inbox_id, message_id)
            join webhooks w on w.inbox_id = o.inbox_id
          ), attachment as (
            ${insertInto('attachments')}
            select a.id, $1, a.n - 1, a.filename, a.content_type, a.size, a.data, a.raw_start, a.raw_end, a.raw_encoding
            from unnest($17::text[], $18::text[], $19::text[], $20::int[], $21::bytea[], $30::int[], $31::int[], $32::text[]) with ordinality
              as a(id, filename, content_type, size, data, raw_start, raw_end, raw_encoding, n)
          )
          ${insertInto('messages')}
          select c.id, c.inbox_id, $1, $12, c.recipient, c.to_key, $26, $27
          from unnest($22::text[], $23::text[], $24::text[], $25::text[]) with ordinality as c(id, inbox_id, recipient, to_key, n)
          order by c.n`,
  /** Other nodes' waiters and streams hear of the copies when (and only if) the group commits (inbox-notify.ts). */
  notify: 'select pg_notify($1, p) from unnest($2::text[]) as p',
} as const;

/** The texts that run prepared: every statement of a group. */
export function prepareDeliveryStatements(statements: PreparedStatements): void {
  for (const text of Object.values(DELIVERY_SQL)) statements.add(text);
}

/** What became of one delivery per inbox, in the order given. */
type Outcomes = Map<string, InsertOutcome>;

/** An inbox of the group as the lock statement read it: copyVerdict's view, and its address. */
interface LockedInbox {
  expiresAt: number;
  licensed: boolean;
  address: string;
}

/**
 * Writes the group in one transaction: all of it or, on any error, nothing (the caller,
 * GroupCommitQueue, then retries item by item). Items go one after another, so each counts the
 * copies the items before it wrote and no inbox passes its quota. Resolves after COMMIT.
 */
export async function writePostgresDeliveryGroup(
  pool: pg.Pool,
  statements: PreparedStatements,
  group: readonly MessageDelivery[],
): Promise<Outcomes[]> {
  const client = await pool.connect();
  const run = <R extends object>(text: string, values: readonly unknown[]) => runPrepared<R>(client, statements, text, values);
  let released = false;
  try {
    await client.query('begin');
    const ids = [...new Set(group.flatMap((delivery) => delivery.inboxIds))].sort();
    const found = new Map<string, LockedInbox>();
    const usage = new Map<string, InboxUsage>();
    const locked = await run<{ id: string; expires_at: string; license_id: string | null; message_count: string; byte_count: string; username: string; domain: string }>(
      DELIVERY_SQL.lock,
      [ids],
    );
    for (const row of locked.rows) {
      found.set(row.id, { expiresAt: Number(row.expires_at), licensed: row.license_id !== null, address: `${row.username}@${row.domain}` });
      usage.set(row.id, { messages: Number(row.message_count), bytes: Number(row.byte_count) });
    }
    const results: Outcomes[] = [];
    const events: string[] = [];
    for (const delivery of group) {
      const outcomes = await storeDelivery(run, delivery, found, usage);
      for (const [inboxId, outcome] of outcomes) if (outcome.status === 'stored') events.push(encodeInboxEvent({ type: 'message', inboxId }));
      results.push(outcomes);
    }
    if (events.length > 0) await run(DELIVERY_SQL.notify, [INBOX_EVENTS_CHANNEL, events]);
    await client.query('commit');
    return results;
  } catch (error) {
    try {
      await client.query('rollback');
    } catch (rollbackError) {
      // The connection is broken: the pool closes it instead of handing it out again.
      released = true;
      releaseClient(client, rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError)));
    }
    throw error;
  } finally {
    if (!released) releaseClient(client);
  }
}

/**
 * One delivery of the group: each inbox's verdict (copyVerdict) against `usage`, which it then
 * updates with the copies it stored, and the statement that stores them.
 */
async function storeDelivery(
  run: (text: string, values: readonly unknown[]) => Promise<unknown>,
  delivery: MessageDelivery,
  found: ReadonlyMap<string, LockedInbox>,
  usage: Map<string, InboxUsage>,
): Promise<Outcomes> {
  const { message, policy } = delivery;
  const outcomes: Outcomes = new Map();
  const now = policy.now.getTime();
  const unlimited = new Set(policy.unlimited ?? []);
  const size = message.raw.byteLength;
  const targets: string[] = [];
  for (const id of new Set(delivery.inboxIds)) {
    const quotaUsage = unlimited.has(id) ? null : (usage.get(id) ?? { messages: 0, bytes: 0 });
    const verdict = copyVerdict(found.get(id), now, quotaUsage, size, policy);
    // A stored copy's outcome is set below, once it has an id; setting it now keeps the given order.
    outcomes.set(id, verdict === 'store' ? { status: 'missing' } : { status: verdict });
    if (verdict === 'store') targets.push(id);
  }
  // Nothing to deliver to: store nothing rather than an orphaned content.
  if (targets.length === 0) return outcomes;

  const content = contentColumns(message);
  const { fromKey, subjectKey } = contentKeys(content);
  const contentId = newTimeOrderedId(now);
  const copyIds = targets.map(() => newId());
  const { attachments } = content;
  const recipients = targets.map((inboxId) => message.recipients?.get(inboxId) ?? '');
  await run(DELIVERY_SQL.store, [
    ...contentRow(contentId, content, toBlob),
    content.codesJson,
    content.linksJson,
    content.authJson,
    attachments.map(() => newId()),
    attachments.map((attachment) => attachment.filename),
    attachments.map((attachment) => attachment.contentType),
    attachments.map((attachment) => attachment.size),
    attachments.map((attachment) => toBlob(attachment.data)),
    copyIds,
    targets,
    recipients,
    recipients.map((recipient, i) => copyToKey(recipient, found.get(targets[i] ?? '')?.address ?? '')),
    fromKey,
    subjectKey,
    now,
    targets.map(() => newId()),
    attachments.map((attachment) => attachment.range?.start ?? null),
    attachments.map((attachment) => attachment.range?.end ?? null),
    attachments.map((attachment) => attachment.range?.encoding ?? null),
  ]);
  targets.forEach((inboxId, i) => {
    outcomes.set(inboxId, { status: 'stored', messageId: copyIds[i] ?? '' });
    const before = usage.get(inboxId) ?? { messages: 0, bytes: 0 };
    usage.set(inboxId, { messages: before.messages + 1, bytes: before.bytes + size });
  });
  return outcomes;
}
