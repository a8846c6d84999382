import { sql, type Kysely } from 'kysely';
import type { InboxEvent } from '../../ports/inbox-events.js';
import type { Database } from './database.js';
import type { SqlDialect } from './dialect.js';

/** The PostgreSQL channel inbox events travel on between nodes (docs/scaling.md "Live mail"). */
export const INBOX_EVENTS_CHANNEL = 'tempinbox_inbox_events';

/** An event as a NOTIFY payload: `m:<inbox id>` or `d:<inbox id>:<message id>` (ids hold no `:`). */
export function encodeInboxEvent(event: InboxEvent): string {
  if (event.type === 'message') return `m:${event.inboxId}`;
  if (event.type === 'deleted') return `d:${event.inboxId}:${event.messageId}`;
  return 'r';
}

/** A NOTIFY payload as an event; null for anything else (another program on the channel). */
export function decodeInboxEvent(payload: string): InboxEvent | null {
  const [kind, inboxId, messageId] = payload.split(':');
  if (kind === 'm' && inboxId !== undefined && inboxId !== '') return { type: 'message', inboxId };
  if (kind === 'd' && inboxId !== undefined && inboxId !== '' && messageId !== undefined) return { type: 'deleted', inboxId, messageId };
  if (kind === 'r') return { type: 'resync' };
  return null;
}

/**
 * Queues the events as NOTIFYs of the caller's transaction (PostgreSQL only; a no-op on
 * SQLite, whose one node hears of its writes in process). PostgreSQL delivers a transaction's
 * notifications only when it commits, and none when it rolls back: a listener never wakes
 * before the message is visible. One statement whatever the number of events.
 */
export async function notifyInTransaction(trx: Kysely<Database>, dialect: SqlDialect, events: readonly InboxEvent[]): Promise<void> {
  if (dialect.name !== 'postgres' || events.length === 0) return;
  const payloads = events.map(encodeInboxEvent);
  await sql`select pg_notify(${INBOX_EVENTS_CHANNEL}, p) from unnest(${payloads}::text[]) as p`.execute(trx);
}
