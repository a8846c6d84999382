import { Migrator, sql, type Kysely } from 'kysely';
import type {
  AttachmentContent,
  Inbox,
  InboxWithCount,
  License,
  LicenseUsage,
  MessageDetail,
  MessageView,
  NewMessage,
  Owner,
  Session,
  SweepCounts,
} from '../../domain/types.js';
import { foldFilter } from '../../domain/match-key.js';
import { owns } from '../../domain/ownership.js';
import {
  StoreFailureError,
  StoreFullError,
  StoreUnavailableError,
  type FreeInboxResult,
  type InboxUsage,
  type InsertInboxResult,
  type InsertLicenseInboxResult,
  type InsertOutcome,
  type MailStore,
  type RedeemRules,
  type RedeemStatus,
  type StorePolicy,
  type MessagePage,
  type PageListing,
  type PageQuery,
  type InboxMark,
  type InboxPoll,
  type PollQuery,
  type RecountQuery,
  type RecountResult,
  hasFilter,
} from '../../ports/mail-store.js';
import { chunks, deleteExpiredBatch, deleteInboxesWithMessages, deleteOrphanContents } from './deletions.js';
import type { Database, DbCount } from './database.js';
import type { SqlDialect, StoreFailureKind } from './dialect.js';
import {
  attachmentsOfContent,
  attachmentsOfContents,
  findAttachmentContent,
  findMessageRow,
  findRaw,
  isMessageOf,
  toCutMessageView,
  toMessageView,
  type MessageCutRow,
} from './message-reads.js';
import { GroupCommitQueue } from './group-commit.js';
import { createFilterQueries, scanMessageIds, type FilterQueries } from './filtered-scan.js';
import { assemblePage, type PageIds } from '../page-assembly.js';
import { createHotQueries, LISTED_IDS_PER_STATEMENT, type HotQueries } from './hot-queries.js';
import { getOrCreateFreeInboxIn, insertInboxIn, insertLicenseInboxIn, redeemLicenseIn } from './limit-writes.js';
import { notifyInTransaction } from './inbox-notify.js';
import { lockInbox, lockInboxOfMessage, releaseUsage, returningDeletedCopy } from './inbox-usage.js';
import { INSERT_ROWS_PER_STATEMENT, type MessageDelivery } from './message-writes.js';
import { createMigrationProvider } from './migrations.js';
import { recountUsageIn } from './usage-recount.js';
import { SqlWebhookStore } from './sql-webhook-store.js';
import { parseHeaders, toCount, toInbox, toLicense, toMillis, toSession, toUsage } from './row-mappers.js';

/**
 * Most inboxes one session listing reads: the largest PREMIUM_MAX_INBOXES the configuration
 * accepts. The limits keep real owners far below it; the bound keeps GET /api/session bounded
 * even if a race or an operator's change ever left more active inboxes with one owner.
 */
export const MAX_LISTED_INBOXES = 10_000;

/** One insertSessionWithInbox. */
interface NewSession {
  session: Session;
  inbox: Inbox;
  now: Date;
}

/** Tries of one operation that the database aborted as a deadlock or serialisation failure. */
const MAX_ATTEMPTS = 3;
/** Base wait before such a retry; grows with the attempt. */
const RETRY_DELAY_MS = 10;

/**
 * MailStore on SQL through Kysely: the same queries serve SQLite and PostgreSQL; what differs
 * is in `dialect`. A backend failure surfaces by its cause (dialect.classifyFailure):
 * StoreUnavailableError, StoreFullError or StoreFailureError.
 */
export class SqlMailStore implements MailStore {
  private closed = false;
  private readonly closeConnections: (() => Promise<void>) | undefined;
  private readonly hot: HotQueries;
  /** The statements of filtered reads (filtered-scan.ts). */
  private readonly filterQueries: FilterQueries;
  /** Message inserts gathered into shared transactions; undefined: one transaction each. */
  private readonly messageQueue: GroupCommitQueue<MessageDelivery, Map<string, InsertOutcome>>;
  /** New sessions with their inboxes, gathered the same way (GET /api/create under load). */
  private readonly sessionQueue: GroupCommitQueue<NewSession, true> | undefined;
  /** pollInbox in one statement (PostgreSQL), else as the separate hot statements (SQLite). */
  private readonly pollStatement: boolean;
  /** The inboxes' webhooks and their outbox (WebhookStore), in the same database. */
  readonly webhooks: SqlWebhookStore;

  /**
   * `writeMessageGroup`: how the messages that arrive together are written, in one
   * transaction (group commit: SQLite, whose one writer commits them one after another anyway,
   * each with its own fsync, in one hop to its writer thread, sqlite-delivery.ts; PostgreSQL,
   * where it saves the round trips and the commit of each, postgres-delivery.ts:
   * docs/benchmarks.md "PostgreSQL"). See MessageDelivery for the rules it keeps.
   * `groupCreates` (default true): the same for new sessions with their inbox (SQLite;
   * PostgreSQL commits concurrent creates in parallel over its pool). `prepare` hears the SQL text of each hot template once
   * (PostgreSQL runs them as named prepared statements: postgres-prepared.ts).
   * `pollStatement`: pollInbox in one statement, worth it where each statement is a round trip
   * (PostgreSQL); default the separate statements.
   * `closeConnections`: ends what the store opened outside Kysely, after Kysely's own close:
   * Kysely ends its driver only once a statement has run, and a store closed unused (a script,
   * a command that stops early) must still end its connections for the process to exit.
   */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: SqlDialect,
    options: {
      writeMessageGroup: (group: readonly MessageDelivery[]) => Promise<Map<string, InsertOutcome>[]>;
      groupCreates?: boolean;
      prepare?: (sql: string) => void;
      pollStatement?: boolean;
      closeConnections?: () => Promise<void>;
    },
  ) {
    this.closeConnections = options.closeConnections;
    this.hot = createHotQueries(options.prepare);
    this.webhooks = new SqlWebhookStore(db, dialect);
    this.filterQueries = createFilterQueries(dialect, options.prepare);
    this.pollStatement = options.pollStatement === true;
    this.messageQueue = new GroupCommitQueue(options.writeMessageGroup);
    // A group with a taken name fails as a whole and is retried one by one (GroupCommitQueue):
    // only that create sees the unique violation, which nameTakenAs turns into `taken`.
    this.sessionQueue =
      options.groupCreates !== false
        ? new GroupCommitQueue((group) =>
            db.transaction().execute(async (trx) => {
              for (const item of group) await this.writeSessionWithInbox(trx, item);
              return group.map(() => true as const);
            }),
          )
        : undefined;
  }

  migrate(): Promise<void> {
    return this.run('migrate', async () => {
      // On PostgreSQL Kysely's Migrator holds a session advisory lock (pg_advisory_lock) around
      // the pending migrations, each in a transaction, and tolerates a concurrent creation of
      // its own bookkeeping tables: several nodes starting at once apply each migration once.
      const migrator = new Migrator({ db: this.db, provider: createMigrationProvider(this.dialect) });
      // Migrator reports failures in its result instead of throwing.
      const { error } = await migrator.migrateToLatest();
      if (error !== undefined) throw error;
    });
  }

  ping(): Promise<void> {
    return this.run('ping', async () => {
      await sql`select 1`.execute(this.db);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Messages already queued are committed (and their callers answered) before the database closes.
    await this.messageQueue?.drain();
    await this.sessionQueue?.drain();
    this.closed = true;
    await this.run('close', async () => {
      await this.db.destroy();
      await this.closeConnections?.();
    });
  }

  // --- sessions ---------------------------------------------------------------------------

  insertSession(session: Session): Promise<void> {
    return this.run('insertSession', async () => {
      await this.insertSessionIn(this.db, session);
    });
  }

  insertSessionWithInbox(session: Session, inbox: Inbox, now: Date): Promise<InsertInboxResult> {
    const item = { session, inbox, now };
    return this.run('insertSessionWithInbox', () =>
      // A name clash throws inside the transaction, which rolls the session back with it.
      this.nameTakenAs<InsertInboxResult>('taken', async () => {
        if (this.sessionQueue !== undefined) await this.sessionQueue.push(item);
        else await this.db.transaction().execute((trx) => this.writeSessionWithInbox(trx, item));
        return 'created';
      }),
    );
  }

  /** The statements of insertSessionWithInbox, inside the caller's transaction. */
  private async writeSessionWithInbox(trx: Kysely<Database>, { session, inbox, now }: NewSession): Promise<void> {
    await this.insertSessionIn(trx, session);
    // A generated name is almost never held: one statement inserts it; else insertInboxIn
    // decides (takes over an expired holder's name, or throws the unique violation).
    const { id, username, domain, createdAt, expiresAt, sessionId, licenseId } = inbox;
    const [inserted] = await this.hot.insertInboxUnlessNamed.execute(
      trx, id, username, domain, toMillis(createdAt), toMillis(expiresAt), sessionId, licenseId,
    );
    if (inserted === undefined) await insertInboxIn(trx, this.dialect, inbox, now);
  }

  private async insertSessionIn(db: Kysely<Database>, session: Session): Promise<void> {
    const { id, tokenHash, createdAt, expiresAt, licenseId } = session;
    await this.hot.insertSession.execute(db, id, tokenHash, toMillis(createdAt), toMillis(expiresAt), licenseId);
  }

  findSession(tokenHash: string, now: Date): Promise<Session | null> {
    return this.run('findSession', async () => {
      const [row] = await this.hot.findSession.execute(this.db, tokenHash, toMillis(now));
      return row === undefined ? null : toSession(row);
    });
  }

  renewSession(sessionId: string, expiresAt: Date): Promise<void> {
    return this.run('renewSession', async () => {
      await this.db.updateTable('sessions').set({ expires_at: toMillis(expiresAt) }).where('id', '=', sessionId).execute();
    });
  }

  redeemLicense(sessionId: string, licenseId: string, now: Date, rules: RedeemRules): Promise<RedeemStatus> {
    return this.run('redeemLicense', () =>
      this.db.transaction().execute((trx) => redeemLicenseIn(trx, this.dialect, sessionId, licenseId, now, rules)),
    );
  }

  // --- licenses ---------------------------------------------------------------------------

  insertLicenses(licenses: License[]): Promise<void> {
    return this.run('insertLicenses', async () => {
      if (licenses.length === 0) return;
      await this.db.transaction().execute(async (trx) => {
        for (const batch of chunks(licenses, INSERT_ROWS_PER_STATEMENT)) {
          const rows = batch.map((license) => ({
            id: license.id,
            key_hash: license.keyHash,
            created_at: toMillis(license.createdAt),
            valid_until: toMillis(license.validUntil),
            max_sessions: license.maxSessions,
            revoked_at: license.revokedAt === null ? null : toMillis(license.revokedAt),
          }));
          await trx.insertInto('licenses').values(rows).execute();
        }
      });
    });
  }

  findLicenseByKeyHash(keyHash: string): Promise<License | null> {
    return this.run('findLicenseByKeyHash', async () => {
      const row = await this.db.selectFrom('licenses').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
      return row === undefined ? null : toLicense(row);
    });
  }

  findLicenseById(licenseId: string): Promise<License | null> {
    return this.run('findLicenseById', async () => {
      const row = await this.db.selectFrom('licenses').selectAll().where('id', '=', licenseId).executeTakeFirst();
      return row === undefined ? null : toLicense(row);
    });
  }

  listLicenses(now: Date): Promise<LicenseUsage[]> {
    return this.run('listLicenses', async () => {
      const at = toMillis(now);
      const rows = await this.db
        .selectFrom('licenses as l')
        .selectAll('l')
        .select((eb) => [
          eb
            .selectFrom('sessions as s')
            .select((sub) => sub.fn.countAll<DbCount>().as('n'))
            .whereRef('s.license_id', '=', 'l.id')
            .where('s.expires_at', '>', at)
            .as('session_count'),
          eb
            .selectFrom('inboxes as i')
            .select((sub) => sub.fn.countAll<DbCount>().as('n'))
            .whereRef('i.license_id', '=', 'l.id')
            .where('i.expires_at', '>', at)
            .as('inbox_count'),
        ])
        .orderBy('l.created_at')
        .orderBy('l.id')
        .execute();
      return rows.map((row) => ({
        ...toLicense(row),
        sessions: toCount(row.session_count),
        activeInboxes: toCount(row.inbox_count),
      }));
    });
  }

  revokeLicense(keyHash: string, at: Date): Promise<boolean> {
    return this.run('revokeLicense', async () => {
      const result = await this.db
        .updateTable('licenses')
        // Revoking twice keeps the first instant: the audit trail says when it really ended.
        .set((eb) => ({ revoked_at: eb.fn.coalesce('revoked_at', eb.val(toMillis(at))).$castTo<number>() }))
        .where('key_hash', '=', keyHash)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    });
  }

  // --- inboxes ----------------------------------------------------------------------------

  insertInbox(inbox: Inbox, now: Date): Promise<InsertInboxResult> {
    return this.run('insertInbox', () =>
      this.nameTakenAs<InsertInboxResult>('taken', async () => {
        await this.db.transaction().execute((trx) => insertInboxIn(trx, this.dialect, inbox, now));
        return 'created';
      }),
    );
  }

  getOrCreateFreeInbox(inbox: Inbox, owner: Owner, now: Date): Promise<FreeInboxResult> {
    return this.run('getOrCreateFreeInbox', () =>
      this.nameTakenAs<FreeInboxResult>({ status: 'taken' }, () =>
        this.db.transaction().execute((trx) => getOrCreateFreeInboxIn(trx, this.dialect, inbox, owner, now)),
      ),
    );
  }

  insertLicenseInbox(inbox: Inbox & { licenseId: string }, now: Date, maxInboxes: number): Promise<InsertLicenseInboxResult> {
    return this.run('insertLicenseInbox', () =>
      this.nameTakenAs<InsertLicenseInboxResult>('taken', () =>
        this.db.transaction().execute((trx) => insertLicenseInboxIn(trx, this.dialect, inbox, now, maxInboxes)),
      ),
    );
  }

  /** Runs an inbox insert; the unique index decides name races: whoever commits first holds the name. */
  private async nameTakenAs<T>(taken: T, work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (this.dialect.isUniqueViolation(error)) return taken;
      throw error;
    }
  }

  findInboxByUsername(username: string): Promise<Inbox | null> {
    return this.run('findInboxByUsername', async () => {
      const [row] = await this.hot.findInboxByUsername.execute(this.db, username);
      return row === undefined ? null : toInbox(row);
    });
  }

  findInboxWithUsage(username: string): Promise<{ inbox: Inbox; usage: InboxUsage } | null> {
    return this.run('findInboxWithUsage', async () => {
      // The same read as findInboxByUsername: the row carries its usage counters.
      const [row] = await this.hot.findInboxByUsername.execute(this.db, username);
      return row === undefined ? null : { inbox: toInbox(row), usage: toUsage(row) };
    });
  }

  findInboxById(inboxId: string): Promise<Inbox | null> {
    return this.run('findInboxById', async () => {
      const row = await this.db.selectFrom('inboxes').selectAll().where('id', '=', inboxId).executeTakeFirst();
      return row === undefined ? null : toInbox(row);
    });
  }

  listActiveInboxes(owner: Owner, now: Date): Promise<InboxWithCount[]> {
    return this.run('listActiveInboxes', async () => {
      const { sessionId, licenseId } = owner;
      const rows = await this.db
        .selectFrom('inboxes as i')
        // The stored counter (inbox-usage.ts), not a count of each inbox's messages.
        .selectAll('i')
        .where((eb) =>
          licenseId === null
            ? eb('i.session_id', '=', sessionId)
            : eb.or([eb('i.session_id', '=', sessionId), eb('i.license_id', '=', licenseId)]),
        )
        .where('i.expires_at', '>', toMillis(now))
        .orderBy('i.created_at', 'desc')
        .orderBy('i.id', 'desc')
        .limit(MAX_LISTED_INBOXES)
        .execute();
      return rows.map((row) => ({ ...toInbox(row), messageCount: toCount(row.message_count) }));
    });
  }

  deleteInbox(inboxId: string): Promise<boolean> {
    return this.run('deleteInbox', () =>
      this.db.transaction().execute(async (trx) => {
        // PostgreSQL: wait for deliveries holding the inbox (FOR NO KEY UPDATE) so none lands after the delete.
        if (this.dialect.rowLocks) await trx.selectFrom('inboxes').select('id').where('id', '=', inboxId).forUpdate().execute();
        const { inboxes } = await deleteInboxesWithMessages(trx, this.dialect, [inboxId]);
        return inboxes > 0;
      }),
    );
  }

  // --- messages ---------------------------------------------------------------------------

  recountUsage(query: RecountQuery): Promise<RecountResult> {
    // A Kysely transaction: on SQLite it runs on the writer thread (sqlite-worker-driver.ts),
    // taking turns with the group commit's deliveries, so the event loop never waits for it.
    return this.run('recountUsage', () => this.db.transaction().execute((trx) => recountUsageIn(trx, this.dialect, query)));
  }

  insertMessage(message: NewMessage, inboxIds: string[], policy: StorePolicy): Promise<Map<string, InsertOutcome>> {
    return this.run('insertMessage', () =>
      inboxIds.length === 0 ? Promise.resolve(new Map()) : this.messageQueue.push({ message, inboxIds, policy }),
    );
  }

  markInbox(inboxId: string, sinceId = ''): Promise<InboxMark> {
    return this.run('markInbox', async () => {
      const [row] = await this.hot.markInbox.execute(this.db, inboxId, sinceId);
      return toMark(row);
    });
  }

  pollInbox(query: PollQuery): Promise<InboxPoll> {
    return this.run('pollInbox', async () => {
      const { tokenHash, username, now, sinceId = '' } = query;
      const idLimit = Math.max(0, Math.floor(query.idLimit ?? 0));
      if (!this.pollStatement) return this.pollSeparately(tokenHash, username, now, sinceId, idLimit);
      const rows = await this.hot.pollInbox.execute(this.db, tokenHash, toMillis(now), username, sinceId, idLimit);
      const [row] = rows;
      if (row === undefined) return { session: null, inbox: null, mark: null, ids: null };
      const session = toSession(row);
      // The inbox columns are NULL together: no inbox of that name the session may read.
      if (row.inbox_id === null || row.username === null || row.domain === null || row.inbox_created_at === null || row.inbox_expires_at === null) {
        return { session, inbox: null, mark: null, ids: null };
      }
      const inbox = toInbox({
        id: row.inbox_id,
        username: row.username,
        domain: row.domain,
        created_at: row.inbox_created_at,
        expires_at: row.inbox_expires_at,
        session_id: row.inbox_session_id,
        license_id: row.inbox_license_id,
      });
      if (inbox.expiresAt.getTime() <= now.getTime()) return { session, inbox, mark: null, ids: null };
      const ids = idLimit === 0 ? null : rows.flatMap((each) => (each.page_id === null ? [] : [each.page_id]));
      return { session, inbox, mark: toMark(row), ids };
    });
  }

  /**
   * pollInbox as the separate hot statements, the mark before the ids (SQLite: each is a
   * cached statement of some microseconds on this thread, cheaper than the one statement,
   * whose derived tables SQLite materialises: docs/decisions/0019-one-statement-per-poll-on-postgres.md).
   */
  private async pollSeparately(tokenHash: string, username: string, now: Date, sinceId: string, idLimit: number): Promise<InboxPoll> {
    const [sessionRow] = await this.hot.findSession.execute(this.db, tokenHash, toMillis(now));
    if (sessionRow === undefined) return { session: null, inbox: null, mark: null, ids: null };
    const session = toSession(sessionRow);
    const [inboxRow] = username === '' ? [] : await this.hot.findInboxByUsername.execute(this.db, username);
    const found = inboxRow === undefined ? null : toInbox(inboxRow);
    // The same rule as pollInbox's statement (hot-queries.ts).
    const inbox = found !== null && owns(session, found) ? found : null;
    if (inbox === null || inbox.expiresAt.getTime() <= now.getTime()) return { session, inbox, mark: null, ids: null };
    const mark = toMark((await this.hot.markInbox.execute(this.db, inbox.id, sinceId))[0]);
    // Nothing to list: the ids are known without reading them.
    if (mark.count === 0 || mark.nothingSince) return { session, inbox, mark, ids: idLimit === 0 ? null : [] };
    const ids = idLimit === 0 ? null : (await this.hot.listIds.execute(this.db, inbox.id, sinceId, idLimit)).map((row) => row.id);
    return { session, inbox, mark, ids };
  }

  readPage<T>(inboxId: string, query: PageQuery, listing: PageListing<T>): Promise<MessagePage<T>> {
    return this.run('readPage', async () => {
      const found = query.ids !== undefined ? { ids: query.ids, beforeFound: true } : await this.pageIds(inboxId, query);
      const cut = Math.max(0, Math.floor(query.maxFieldBytes));
      return assemblePage(found, query, listing, (ids) => this.readListed(inboxId, ids, cut));
    });
  }

  /**
   * The ids of a page, `limit` + 1 of them (one more tells whether messages exist beyond it):
   * one statement on the (inbox_id, seq) index for the hot shapes, the bounded statements of
   * filtered-scan.ts for a filter or a wait's cursor.
   */
  private async pageIds(inboxId: string, query: PageQuery): Promise<PageIds> {
    const { sinceId = '', beforeId } = query;
    // Negative or fractional numbers would mean "no limit" to SQLite and an error to PostgreSQL.
    const limit = Math.max(0, Math.floor(query.limit)) + 1;
    const forward = query.oldestFirst === true;
    if (hasFilter(query.filter) || query.afterId !== undefined || (forward && beforeId !== undefined)) {
      return scanMessageIds(this.db, this.filterQueries, inboxId, { ...query, limit, oldestFirst: forward, filter: foldFilter(query.filter) });
    }
    const rows = forward
      ? await this.hot.listIdsForward.execute(this.db, inboxId, sinceId, limit)
      : beforeId === undefined
        ? await this.hot.listIds.execute(this.db, inboxId, sinceId, limit)
        : await this.hot.listIdsBefore.execute(this.db, inboxId, sinceId, beforeId, limit);
    const ids = rows.map((row) => row.id);
    // An empty page is the only case where an unknown `beforeId` and "nothing older" look alike.
    const beforeFound = beforeId === undefined || ids.length > 0 || (await isMessageOf(this.db, inboxId, beforeId));
    return { ids, beforeFound };
  }

  /** The listed messages with these ids: LISTED_IDS_PER_STATEMENT per statement, then their attachments. */
  private async readListed(inboxId: string, ids: readonly string[], cut: number): Promise<MessageView[]> {
    const rows: MessageCutRow[] = [];
    for (const batch of chunks([...new Set(ids)], LISTED_IDS_PER_STATEMENT)) {
      // Fill the template's slots by repeating an id: IN ignores the duplicates.
      const slots = Array.from({ length: LISTED_IDS_PER_STATEMENT }, (_, i) => batch[i] ?? batch[0] ?? '');
      rows.push(...(await this.hot.listByIds.execute(this.db, inboxId, cut, ...slots)));
    }
    const attachments = await attachmentsOfContents(this.db, rows.filter((row) => row.attachment_count > 0).map((row) => row.content_id));
    return rows.map((row) => toCutMessageView(row, attachments.get(row.content_id) ?? [], cut));
  }

  trimMessages(inboxId: string, keep: number, maxDeleted: number): Promise<number> {
    return this.run('trimMessages', () =>
      this.db.transaction().execute(async (trx) => {
        // The inbox row first (its counters change below): the lock order of every writer.
        await lockInbox(trx, this.dialect, inboxId);
        // One statement: the messages past the newest `keep`, at most `maxDeleted` of them.
        const deleted = await trx
          .deleteFrom('messages')
          .where('seq', 'in', (eb) =>
            eb
              .selectFrom('messages')
              .select('seq')
              .where('inbox_id', '=', inboxId)
              .orderBy('seq', 'desc')
              .limit(Math.max(0, Math.floor(maxDeleted)))
              .offset(Math.max(0, Math.floor(keep))),
          )
          .returning(returningDeletedCopy)
          .execute();
        await releaseUsage(trx, deleted);
        await deleteOrphanContents(trx, this.dialect, deleted.map((row) => row.content_id));
        return deleted.length;
      }),
    );
  }

  findMessage(messageId: string): Promise<MessageDetail | null> {
    return this.run('findMessage', async () => {
      const row = await findMessageRow(this.db, messageId);
      if (row === undefined) return null;
      const attachments = row.attachment_count > 0 ? await attachmentsOfContent(this.db, row.content_id) : [];
      return {
        ...toMessageView(row, attachments),
        envelopeFrom: row.envelope_from,
        headers: parseHeaders(row.headers_json),
      };
    });
  }

  findRawMessage(messageId: string): Promise<{ inboxId: string; raw: Uint8Array } | null> {
    return this.run('findRawMessage', () => findRaw(this.db, messageId));
  }

  findAttachment(messageId: string, attachmentId: string): Promise<AttachmentContent | null> {
    return this.run('findAttachment', () => findAttachmentContent(this.db, messageId, attachmentId));
  }

  deleteMessage(messageId: string): Promise<boolean> {
    return this.run('deleteMessage', () =>
      this.db.transaction().execute(async (trx) => {
        await lockInboxOfMessage(trx, this.dialect, messageId);
        const deleted = await trx.deleteFrom('messages').where('id', '=', messageId).returning(returningDeletedCopy).execute();
        await releaseUsage(trx, deleted);
        await deleteOrphanContents(trx, this.dialect, deleted.map((row) => row.content_id));
        await notifyInTransaction(trx, this.dialect, deleted.map((row) => ({ type: 'deleted', inboxId: row.inbox_id, messageId })));
        return deleted.length > 0;
      }),
    );
  }

  // --- expiry -----------------------------------------------------------------------------

  deleteExpired(now: Date, limit: number): Promise<SweepCounts> {
    return this.run('deleteExpired', () => deleteExpiredBatch(this.db, this.dialect, toMillis(now), limit));
  }

  /**
   * Runs one operation, turning a backend failure into the store error of its cause. An
   * operation the database rolled back to break a deadlock or serialisation conflict (several
   * nodes writing the same rows) runs again, a bounded number of times: each operation is one
   * statement or one transaction, so nothing of the failed attempt was kept.
   */
  private async run<T>(operation: string, work: () => Promise<T>): Promise<T> {
    if (this.closed && operation !== 'close') throw new StoreUnavailableError(`${operation} failed: the store is closed`);
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await work();
      } catch (error) {
        if (error instanceof StoreUnavailableError || error instanceof StoreFullError || error instanceof StoreFailureError) throw error;
        if (attempt < MAX_ATTEMPTS && this.dialect.isRetryable(error)) {
          // A little random wait, so the two sides of a deadlock do not meet again at once.
          await new Promise((resolve) => setTimeout(resolve, RETRY_DELAY_MS * attempt * (1 + Math.random())));
          continue;
        }
        throw storeError(operation, this.dialect.classifyFailure(error), error);
      }
    }
  }
}

/** markInbox's figures as an InboxMark: count, newest and sum of seqs, and the seq of `sinceId` (NULL: not one of the inbox's). */
function toMark(row: { n: DbCount; newest: DbCount | null; total: DbCount | null; since_seq: DbCount | null } | undefined): InboxMark {
  const count = toCount(row?.n);
  // PostgreSQL returns int8 and numeric as strings: compare as BigInt, never as floats.
  const newest = BigInt(String(row?.newest ?? 0));
  const since = row?.since_seq === null || row?.since_seq === undefined ? null : BigInt(String(row.since_seq));
  return { count, version: `${count}.${newest}.${String(row?.total ?? 0)}`, nothingSince: since !== null && since >= newest };
}

/** The store error for a failure of `kind`, naming the operation and keeping the driver's error as its cause. */
function storeError(operation: string, kind: StoreFailureKind, error: unknown): Error {
  const reason = error instanceof Error ? error.message : String(error);
  const message = `${operation} failed: ${reason}`;
  if (kind === 'unavailable') return new StoreUnavailableError(message, { cause: error });
  if (kind === 'full') return new StoreFullError(message, { cause: error });
  return new StoreFailureError(message, { cause: error });
}
