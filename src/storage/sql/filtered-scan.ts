import { setImmediate } from 'node:timers/promises';
import { sql, type ExpressionBuilder, type Kysely } from 'kysely';
import { MATCH_KEY_CHARS, type FoldedFilter } from '../../domain/match-key.js';
import type { Database, DbCount } from './database.js';
import type { SqlDialect } from './dialect.js';
import { QueryTemplate } from './query-template.js';

/**
 * Copies one statement of a filtered read looks at. It searches at most three keys of
 * MATCH_KEY_CHARS per copy, so a statement costs about a millisecond on SQLite, whose reads run
 * on the event loop, even with 320-character near misses (docs/benchmarks.md "Filters");
 * between two statements the event loop serves everyone else.
 */
export const FILTER_SCAN_ROWS = 256;

/** Above every seq: a scan without `before` has no upper end. */
const NO_UPPER_SEQ = Number.MAX_SAFE_INTEGER;

/** Which messages scanMessageIds reads (MessagePageQuery's bounds, with the filter folded). */
export interface ScanQuery {
  sinceId?: string;
  beforeId?: string;
  afterId?: string;
  limit: number;
  oldestFirst: boolean;
  filter: FoldedFilter;
}

/** The ids of the matching copies, in scan order, and whether the anchors were found. */
export interface ScanResult {
  ids: string[];
  beforeFound: boolean;
  afterFound?: boolean;
}

/**
 * The statements of a filtered read, as templates compiled once per store (QueryTemplate;
 * `onCompiled` hears their texts: PostgreSQL prepares them). One text serves every
 * combination of filters: an absent filter is '', which every key contains.
 */
export function createFilterQueries(dialect: SqlDialect, onCompiled?: (sql: string) => void) {
  const window = (order: 'asc' | 'desc') =>
    new QueryTemplate(6, (db: Kysely<Database>, inboxId: string, low: number, high: number, to: string, from: string, subject: string) =>
      db
        .selectFrom('messages as m')
        .select(['m.id', 'm.seq'])
        .select(matchesExpression(dialect, to, from, subject).as('hit'))
        .where('m.inbox_id', '=', inboxId)
        .where('m.seq', '>', low)
        .where('m.seq', '<', high)
        .orderBy('m.seq', order)
        .limit(FILTER_SCAN_ROWS),
    onCompiled);
  return {
    /** The seqs of `sinceId`, `beforeId` and `afterId` in the inbox, each NULL when it is not one of its messages. */
    anchors: new QueryTemplate(4, (db: Kysely<Database>, inboxId: string, sinceId: string, beforeId: string, afterId: string) =>
      db.selectNoFrom((eb) => [seqOf(eb, inboxId, sinceId).as('since_seq'), seqOf(eb, inboxId, beforeId).as('before_seq'), seqOf(eb, inboxId, afterId).as('after_seq')]),
    onCompiled),
    /** Up to FILTER_SCAN_ROWS copies of the inbox strictly between two seqs, newest first, each with whether it matches. */
    newest: window('desc'),
    /** The same, oldest first. */
    oldest: window('asc'),
  };
}

/** The templates of one store. */
export type FilterQueries = ReturnType<typeof createFilterQueries>;

/** The seq of message `id` of the inbox (NULL when it is not one of its messages). */
function seqOf(eb: ExpressionBuilder<Database, never>, inboxId: string, id: string) {
  return eb.selectFrom('messages as s').select('s.seq').where('s.id', '=', id).where('s.inbox_id', '=', inboxId);
}

/**
 * 1 when each folded filter is a substring of its key, else 0. A copy a node of an earlier
 * release stored has no keys (NULL): it is matched against its fields' first
 * MATCH_KEY_CHARS characters through the database's lower() instead (Unicode on PostgreSQL,
 * ASCII on SQLite), read only for such a copy (COALESCE evaluates its fallback lazily).
 */
function matchesExpression(dialect: SqlDialect, to: string, from: string, subject: string) {
  const head = (column: string) => sql<string>`lower(substr(${sql.ref(column)}, 1, ${sql.lit(MATCH_KEY_CHARS)}))`;
  const toKey = sql<string>`coalesce(${sql.ref('m.to_key')}, lower(case when ${sql.ref('m.recipient')} <> '' then ${sql.ref('m.recipient')}
    else (select i.username || '@' || i.domain from inboxes i where i.id = ${sql.ref('m.inbox_id')}) end))`;
  const fromKey = sql<string>`coalesce(${sql.ref('m.from_key')},
    (select ${head('c.from_header')} || ${sql.lit('\n')} || ${head('c.envelope_from')} from contents c where c.id = ${sql.ref('m.content_id')}))`;
  const subjectKey = sql<string>`coalesce(${sql.ref('m.subject_key')}, (select ${head('c.subject')} from contents c where c.id = ${sql.ref('m.content_id')}))`;
  const has = (key: typeof toKey, part: string) => sql`${dialect.position(key, sql.val(part))} > 0`;
  return sql<number>`case when ${has(toKey, to)} and ${has(fromKey, from)} and ${has(subjectKey, subject)} then 1 else 0 end`;
}

/**
 * The ids of the inbox's copies that match the filter, between the query's bounds, at most
 * `limit` of them, newest first (oldest first with `oldestFirst`). The copies are looked at
 * FILTER_SCAN_ROWS per statement, with a turn of the event loop between statements, so no
 * statement searches more than a bounded amount of text whatever the inbox holds; the
 * statements go on until `limit` copies matched or the bounds are passed.
 */
export async function scanMessageIds(db: Kysely<Database>, queries: FilterQueries, inboxId: string, query: ScanQuery): Promise<ScanResult> {
  const [anchors] = await queries.anchors.execute(db, inboxId, query.sinceId ?? '', query.beforeId ?? '', query.afterId ?? '');
  const found = (seq: DbCount | null | undefined): seq is DbCount => seq !== null && seq !== undefined;
  const beforeFound = query.beforeId === undefined || found(anchors?.before_seq);
  const afterFound = query.afterId === undefined ? {} : { afterFound: found(anchors?.after_seq) };
  if (!beforeFound || afterFound.afterFound === false) return { ids: [], beforeFound, ...afterFound };
  let low = Math.max(Number(anchors?.since_seq ?? 0), Number(anchors?.after_seq ?? 0));
  let high = query.beforeId === undefined ? NO_UPPER_SEQ : Number(anchors?.before_seq);
  const { to, from, subject } = query.filter;
  const window = query.oldestFirst ? queries.oldest : queries.newest;
  const ids: string[] = [];
  // Each statement moves the bound past the copies it looked at: at most copies / FILTER_SCAN_ROWS + 1 statements.
  while (ids.length < query.limit) {
    const rows = await window.execute(db, inboxId, low, high, to, from, subject);
    for (const row of rows) if (Number(row.hit) === 1 && ids.length < query.limit) ids.push(row.id);
    const last = rows.at(-1);
    if (last === undefined || rows.length < FILTER_SCAN_ROWS) break;
    if (query.oldestFirst) low = Number(last.seq);
    else high = Number(last.seq);
    // Others' requests and SMTP sessions run between two statements (SQLite reads on this thread).
    await setImmediate();
  }
  return { ids, beforeFound: true, ...afterFound };
}
