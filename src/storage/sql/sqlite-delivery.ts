/**
 * Deliveries on SQLite in one thread hop (docs/benchmarks.md "One hop per delivery group"):
 * the main thread turns a group of deliveries into plain data (toWireDeliveries) and posts it
 * to the SQLite writer thread in one message; the thread writes the whole group in one
 * transaction with prepared statements (writeDeliveryGroup) and answers the outcomes. Before,
 * every statement of a delivery was a Kysely query compiled on the main thread and a round
 * trip of its own (about ten per message).
 *
 * It keeps the rules of MessageDelivery (message-writes.ts), as PostgreSQL's group writer
 * does (postgres-delivery.ts): the contract suite runs the same cases on both.
 *
 * Loaded by the writer thread: besides node: modules and better-sqlite3 it imports only
 * dependency-free modules of ours, with `.ts` specifiers (rewritten to `.js` by tsc), so that
 * the thread runs the sources directly under Node's type stripping (tests, tsx).
 */
import type BetterSqlite3 from 'better-sqlite3';
import { newId, newTimeOrderedId } from '../../domain/ids.ts';
import { copyVerdict } from '../../domain/plan.ts';
import type { InsertOutcome, InboxQuota } from '../../ports/mail-store.js';
import type { MessageDelivery } from './message-writes.js';
import { contentColumns, contentKeys, contentRow, copyToKey, SQLITE_DELIVERY_SQL, type ContentColumns } from './delivery-statements.ts';

/** One delivery as the thread receives it: columns ready to bind, bytes as Uint8Array. */
export interface WireDelivery {
  content: ContentColumns;
  /** The inboxes, each with the envelope address its copy was delivered to. */
  inboxes: Array<{ id: string; recipient: string }>;
  now: number;
  free: InboxQuota;
  premium: InboxQuota;
  unlimited: string[];
}

/** What became of one delivery per inbox (see InsertOutcome), in the order given. */
export type WireOutcomes = Map<string, InsertOutcome>;

/** The group as plain data for the thread (structured clone copies it; nothing is transferred, so a retry can send it again). */
export function toWireDeliveries(deliveries: readonly MessageDelivery[]): WireDelivery[] {
  return deliveries.map(({ message, inboxIds, policy }) => ({
    content: contentColumns(message),
    inboxes: [...new Set(inboxIds)].map((id) => ({ id, recipient: message.recipients?.get(id) ?? '' })),
    now: policy.now.getTime(),
    free: policy.free,
    premium: policy.premium,
    unlimited: [...(policy.unlimited ?? [])],
  }));
}

/** The statements of a delivery, in SQLite's dialect (delivery-statements.ts). */
const SQL = SQLITE_DELIVERY_SQL;

/** Bytes as better-sqlite3 binds them (a Buffer over the same memory; structured clone delivers Uint8Array). */
function blob(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Writes the group in one IMMEDIATE transaction: all of it or, on any error, nothing (the
 * caller, GroupCommitQueue, then retries item by item). Items go one after another, so each
 * counts the copies the items before it wrote and no inbox passes its quota. Per item: the
 * content once, its insights and attachments, and one copy per inbox that exists, is active
 * at `now` and has room; an item no inbox takes stores nothing.
 */
export function writeDeliveryGroup(database: BetterSqlite3.Database, prepare: (sql: string) => BetterSqlite3.Statement, group: readonly WireDelivery[]): WireOutcomes[] {
  return database.transaction(() => group.map((delivery) => writeDelivery(prepare, delivery))).immediate();
}

function writeDelivery(prepare: (sql: string) => BetterSqlite3.Statement, delivery: WireDelivery): WireOutcomes {
  const outcomes: WireOutcomes = new Map();
  const unlimited = new Set(delivery.unlimited);
  const size = delivery.content.raw.byteLength;
  const quotas = { free: delivery.free, premium: delivery.premium };
  const targets: Array<{ id: string; recipient: string; address: string }> = [];
  for (const inbox of delivery.inboxes) {
    const row = prepare(SQL.inbox).get(inbox.id) as
      | { expires_at: number; license_id: string | null; message_count: number; byte_count: number; username: string; domain: string }
      | undefined;
    const found = row === undefined ? undefined : { expiresAt: Number(row.expires_at), licensed: row.license_id !== null };
    // Items before this one in the group have updated the counters already: they count too.
    const usage = row === undefined || unlimited.has(inbox.id) ? null : { messages: Number(row.message_count), bytes: Number(row.byte_count) };
    const verdict = copyVerdict(found, delivery.now, usage, size, quotas);
    // A stored copy's outcome is set below, once it has an id; setting it now keeps the given order.
    outcomes.set(inbox.id, verdict === 'store' ? { status: 'missing' } : { status: verdict });
    if (verdict === 'store' && row !== undefined) targets.push({ ...inbox, address: `${row.username}@${row.domain}` });
  }
  if (targets.length === 0) return outcomes;

  const { content } = delivery;
  // Folded here, on the writer thread, once per content (domain/match-key.ts).
  const { fromKey, subjectKey } = contentKeys(content);
  const contentId = newTimeOrderedId(delivery.now);
  prepare(SQL.content).run(...contentRow(contentId, content, blob));
  prepare(SQL.insights).run(contentId, content.codesJson, content.linksJson, content.authJson);
  content.attachments.forEach((attachment, position) => {
    const { filename, contentType, size: bytes, data, range } = attachment;
    prepare(SQL.attachment).run(newId(), contentId, position, filename, contentType, bytes, blob(data), range?.start ?? null, range?.end ?? null, range?.encoding ?? null);
  });
  for (const inbox of targets) {
    const messageId = newId();
    const toKey = copyToKey(inbox.recipient, inbox.address);
    prepare(SQL.copy).run(messageId, inbox.id, contentId, content.receivedAt, inbox.recipient, toKey, fromKey, subjectKey);
    prepare(SQL.addUsage).run(size, inbox.id);
    prepare(SQL.oweWebhook).run(newId(), messageId, delivery.now, delivery.now, inbox.id);
    outcomes.set(inbox.id, { status: 'stored', messageId });
  }
  return outcomes;
}
