import type { DbCount } from './database.js';
import { anchorSeq, messageCutQuery, seqOf } from './message-reads.js';
import { QueryTemplate } from './query-template.js';

/**
 * The queries behind every poll and every RCPT, as templates compiled once per store (see
 * QueryTemplate). The same queries as the builder code they replace.
 */
export function createHotQueries() {
  return {
    findSession: new QueryTemplate(2, (db, tokenHash: string, now: number) =>
      db.selectFrom('sessions').selectAll().where('token_hash', '=', tokenHash).where('expires_at', '>', now),
    ),
    findInboxByUsername: new QueryTemplate(1, (db, username: string) => db.selectFrom('inboxes').selectAll().where('username', '=', username)),
    countMessages: new QueryTemplate(1, (db, inboxId: string) =>
      db.selectFrom('messages').select((eb) => eb.fn.countAll<DbCount>().as('n')).where('inbox_id', '=', inboxId),
    ),
    /**
     * A page of an inbox for listings, bodies cut (messageCutQuery). `sinceId` '' or unknown
     * means no lower bound (seqOf falls back to 0).
     */
    listPage: new QueryTemplate(4, (db, inboxId: string, sinceId: string, cutChars: number, limit: number) =>
      messageCutQuery(db, cutChars)
        .where('m.inbox_id', '=', inboxId)
        .where('m.seq', '>', (eb) => seqOf(eb, inboxId, sinceId))
        .orderBy('m.seq', 'desc')
        .limit(limit),
    ),
    /** listPage read forward: the first `limit` messages after `sinceId`, oldest first (event streams). */
    listPageForward: new QueryTemplate(4, (db, inboxId: string, sinceId: string, cutChars: number, limit: number) =>
      messageCutQuery(db, cutChars)
        .where('m.inbox_id', '=', inboxId)
        .where('m.seq', '>', (eb) => seqOf(eb, inboxId, sinceId))
        .orderBy('m.seq', 'asc')
        .limit(limit),
    ),
    /** listPage, only messages older than `beforeId` (no rows when it is not a message of the inbox). */
    listPageBefore: new QueryTemplate(5, (db, inboxId: string, sinceId: string, beforeId: string, cutChars: number, limit: number) =>
      messageCutQuery(db, cutChars)
        .where('m.inbox_id', '=', inboxId)
        .where('m.seq', '>', (eb) => seqOf(eb, inboxId, sinceId))
        .where('m.seq', '<', (eb) => anchorSeq(eb, inboxId, beforeId))
        .orderBy('m.seq', 'desc')
        .limit(limit),
    ),
  };
}

/** The templates of one store. */
export type HotQueries = ReturnType<typeof createHotQueries>;
