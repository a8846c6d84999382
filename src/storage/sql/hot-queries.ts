import type { Compilable, Kysely } from 'kysely';
import { CHECK_READ_BATCH } from '../../domain/check-limits.js';
import type { Database, DbCount } from './database.js';
import { anchorSeq, messageCutQuery, seqOf } from './message-reads.js';
import { QueryTemplate } from './query-template.js';

/**
 * Ids per statement of listByIds: what a check reads at once of the messages it has not
 * serialised yet (CHECK_READ_BATCH), so one statement loads at most this many bodies.
 */
export const LISTED_IDS_PER_STATEMENT = CHECK_READ_BATCH;

/**
 * The queries behind every poll and every RCPT, as templates compiled once per store (see
 * QueryTemplate). The same queries as the builder code they replace. `onCompiled` hears each
 * template's SQL text once (PostgreSQL prepares them: postgres-prepared.ts).
 */
export function createHotQueries(onCompiled?: (sql: string) => void) {
  const template = <A extends readonly unknown[], R>(arity: number, build: (db: Kysely<Database>, ...args: A) => Compilable<R>) =>
    new QueryTemplate(arity, build, onCompiled);
  return {
    findSession: template(2, (db, tokenHash: string, now: number) =>
      db.selectFrom('sessions').selectAll().where('token_hash', '=', tokenHash).where('expires_at', '>', now),
    ),
    insertSession: template(5, (db, id: string, tokenHash: string, createdAt: number, expiresAt: number, licenseId: string | null) =>
      db.insertInto('sessions').values({ id, token_hash: tokenHash, created_at: createdAt, expires_at: expiresAt, license_id: licenseId }),
    ),
    /**
     * A new inbox unless some inbox (live or expired) holds its username: then no row, and the
     * caller takes the general path (insertInboxIn). ON CONFLICT DO NOTHING, on both backends,
     * neither fails the statement nor aborts a PostgreSQL transaction.
     */
    insertInboxUnlessNamed: template(
      7,
      (db, id: string, username: string, domain: string, createdAt: number, expiresAt: number, sessionId: string | null, licenseId: string | null) =>
        db
          .insertInto('inboxes')
          .values({ id, username, domain, created_at: createdAt, expires_at: expiresAt, session_id: sessionId, license_id: licenseId })
          .onConflict((conflict) => conflict.column('username').doNothing())
          .returning('id'),
    ),
    findInboxByUsername: template(1, (db, username: string) => db.selectFrom('inboxes').selectAll().where('username', '=', username)),
    /**
     * markInbox: count, newest seq and sum of seqs of the inbox, and the seq of `sinceId` (NULL
     * when it is not one of its messages); all from the (inbox_id, seq) index.
     */
    markInbox: template(2, (db, inboxId: string, sinceId: string) =>
      db
        .selectFrom('messages as m')
        .select((eb) => [
          eb.fn.countAll<DbCount>().as('n'),
          eb.fn.max<DbCount | null>('m.seq').as('newest'),
          eb.fn.sum<DbCount | null>('m.seq').as('total'),
          eb.selectFrom('messages as s').select('s.seq').where('s.id', '=', sinceId).where('s.inbox_id', '=', inboxId).as('since_seq'),
        ])
        .where('m.inbox_id', '=', inboxId),
    ),
    /**
     * pollInbox (docs/architecture.md "One statement per poll"): the session by token hash, the
     * inbox of that username it may read (its creator, or the license both hold: the rule of
     * domain/ownership.ts), markInbox's figures and the first `idLimit` ids after `sinceId`
     * (listIds), in one statement: one row per id, at least one; no row when there is no
     * live session. The figures and the ids are read for the username's inbox whoever owns
     * it, and the store drops them unless the session may read it: only the ownership test
     * needs the session, and the joins stay plain (no LATERAL): the text is valid SQLite too,
     * though only PostgreSQL runs it (SqlMailStore's `pollStatement`). Every
     * subquery names the inbox by username, never by a column of the outer rows: PostgreSQL
     * then runs each once (an InitPlan) and bounds the index scan of the ids with `since`'s
     * seq, instead of a correlated subquery per row.
     */
    pollInbox: template(5, (db, tokenHash: string, now: number, username: string, sinceId: string, idLimit: number) => {
      // The username's inbox id, whoever owns it (a subquery: one index read).
      const inboxOf = () => db.selectFrom('inboxes as n').select('n.id').where('n.username', '=', username);
      return db
        .selectFrom('sessions as s')
        .leftJoin('inboxes as i', (join) =>
          join
            .on('i.username', '=', username)
            .on((eb) => eb.or([eb('i.session_id', '=', eb.ref('s.id')), eb('i.license_id', '=', eb.ref('s.license_id'))])),
        )
        .innerJoin(
          (eb) =>
            eb
              .selectFrom('messages as k')
              .select((sub) => [
                sub.fn.countAll<DbCount>().as('n'),
                sub.fn.max<DbCount | null>('k.seq').as('newest'),
                sub.fn.sum<DbCount | null>('k.seq').as('total'),
              ])
              .where('k.inbox_id', '=', inboxOf)
              .as('k'),
          (join) => join.onTrue(),
        )
        .leftJoin(
          (eb) =>
            eb
              .selectFrom('messages as p')
              .select(['p.id', 'p.seq'])
              .where('p.inbox_id', '=', inboxOf)
              .where('p.seq', '>', (sub) =>
                sub.fn.coalesce(
                  sub.selectFrom('messages as a').select('a.seq').where('a.id', '=', sinceId).where('a.inbox_id', '=', inboxOf),
                  sub.lit(0),
                ),
              )
              .orderBy('p.seq', 'desc')
              .limit(idLimit)
              .as('p'),
          (join) => join.onTrue(),
        )
        .select([
          's.id',
          's.token_hash',
          's.created_at',
          's.expires_at',
          's.license_id',
          'i.id as inbox_id',
          'i.username',
          'i.domain',
          'i.created_at as inbox_created_at',
          'i.expires_at as inbox_expires_at',
          'i.session_id as inbox_session_id',
          'i.license_id as inbox_license_id',
          'k.n',
          'k.newest',
          'k.total',
          'p.id as page_id',
        ])
        .select((eb) => eb.selectFrom('messages as x').select('x.seq').where('x.id', '=', sinceId).where('x.inbox_id', '=', inboxOf).as('since_seq'))
        .where('s.token_hash', '=', tokenHash)
        .where('s.expires_at', '>', now)
        .orderBy('p.seq', 'desc');
    }),
    /** The ids of a page after `sinceId` ('' or unknown: from the first), newest first: the index and the messages rows, no content. */
    listIds: template(3, (db, inboxId: string, sinceId: string, limit: number) =>
      db
        .selectFrom('messages as m')
        .select('m.id')
        .where('m.inbox_id', '=', inboxId)
        .where('m.seq', '>', (eb) => seqOf(eb, inboxId, sinceId))
        .orderBy('m.seq', 'desc')
        .limit(limit),
    ),
    /** listIds read forward: the first `limit` ids after `sinceId`, oldest first (event streams). */
    listIdsForward: template(3, (db, inboxId: string, sinceId: string, limit: number) =>
      db
        .selectFrom('messages as m')
        .select('m.id')
        .where('m.inbox_id', '=', inboxId)
        .where('m.seq', '>', (eb) => seqOf(eb, inboxId, sinceId))
        .orderBy('m.seq', 'asc')
        .limit(limit),
    ),
    /** listIds, only messages older than `beforeId` (no rows when it is not a message of the inbox). */
    listIdsBefore: template(4, (db, inboxId: string, sinceId: string, beforeId: string, limit: number) =>
      db
        .selectFrom('messages as m')
        .select('m.id')
        .where('m.inbox_id', '=', inboxId)
        .where('m.seq', '>', (eb) => seqOf(eb, inboxId, sinceId))
        .where('m.seq', '<', (eb) => anchorSeq(eb, inboxId, beforeId))
        .orderBy('m.seq', 'desc')
        .limit(limit),
    ),
    /**
     * Up to LISTED_IDS_PER_STATEMENT messages of an inbox by id, bodies cut (messageCutQuery).
     * A fixed number of ids keeps one SQL text; callers repeat an id to fill the slots.
     */
    listByIds: template(2 + LISTED_IDS_PER_STATEMENT, (db, inboxId: string, cutChars: number, ...ids: string[]) =>
      messageCutQuery(db, cutChars).where('m.inbox_id', '=', inboxId).where('m.id', 'in', ids),
    ),
  };
}

/** The templates of one store. */
export type HotQueries = ReturnType<typeof createHotQueries>;
