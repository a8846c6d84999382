import type { DbCount } from './database.js';
import { messageQuery, seqOf } from './message-reads.js';
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
    /** listMessageRows without a limit. */
    listMessages: new QueryTemplate(1, (db, inboxId: string) => messageQuery(db).where('m.inbox_id', '=', inboxId).orderBy('m.seq', 'desc')),
    /** listMessageRows with `since` and without a limit. */
    listMessagesSince: new QueryTemplate(2, (db, inboxId: string, sinceId: string) =>
      messageQuery(db)
        .where('m.inbox_id', '=', inboxId)
        .where('m.seq', '>', (eb) => seqOf(eb, inboxId, sinceId))
        .orderBy('m.seq', 'desc'),
    ),
  };
}

/** The templates of one store. */
export type HotQueries = ReturnType<typeof createHotQueries>;
