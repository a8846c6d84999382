import { sql, type Kysely } from 'kysely';
import { newId } from '../../domain/ids.js';
import { StoreFailureError, StoreFullError, StoreUnavailableError } from '../../ports/mail-store.js';
import {
  WEBHOOK_ATTEMPTS_KEPT,
  type AttemptRecord,
  type ClaimedDelivery,
  type Webhook,
  type WebhookAttempt,
  type WebhookEvent,
  type WebhookStore,
} from '../../ports/webhook-store.js';
import type { Database } from './database.js';
import type { SqlDialect } from './dialect.js';
import { toDate, toMillis } from './row-mappers.js';

/** Tries of one operation the database aborted as a deadlock (a recorded attempt meeting an inbox's deletion). */
const MAX_TRIES = 3;

/**
 * Most deliveries one claim takes: far under both databases' bind limits for the webhook
 * look-up that follows, whatever WEBHOOK_CONCURRENCY allows.
 */
const MAX_CLAIM = 256;

/**
 * WebhookStore on the SQL database of the messages (migration 0007-webhooks). The deliveries a
 * message owes are written by the message's own transaction (sqlite-delivery.ts,
 * postgres-delivery.ts); this store sets the webhook, claims and records. Claiming is one
 * UPDATE of the oldest due rows that moves their `due_at` to the end of a lease: on PostgreSQL
 * the rows are picked FOR UPDATE SKIP LOCKED, so nodes claiming at once take disjoint rows; on
 * SQLite the one writer serialises claims. An attempt is recorded only by the claim that holds
 * the row's `lease_token`.
 */
export class SqlWebhookStore implements WebhookStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: SqlDialect,
  ) {}

  setWebhook(webhook: Webhook): Promise<boolean> {
    return this.run('setWebhook', async () => {
      const result = await this.db
        .insertInto('webhooks')
        .columns(['inbox_id', 'url', 'secret', 'created_at'])
        .expression((eb) =>
          eb
            .selectFrom('inboxes')
            .select([
              'id',
              sql.val(webhook.url).as('url'),
              sql.val(webhook.secret).as('secret'),
              sql.val(toMillis(webhook.createdAt)).as('created_at'),
            ])
            .where('id', '=', webhook.inboxId),
        )
        .onConflict((oc) =>
          oc.column('inbox_id').doUpdateSet((eb) => ({
            url: eb.ref('excluded.url'),
            secret: eb.ref('excluded.secret'),
            created_at: eb.ref('excluded.created_at'),
          })),
        )
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
    });
  }

  findWebhook(inboxId: string): Promise<Webhook | null> {
    return this.run('findWebhook', async () => {
      const row = await this.db.selectFrom('webhooks').selectAll().where('inbox_id', '=', inboxId).executeTakeFirst();
      return row === undefined ? null : { inboxId: row.inbox_id, url: row.url, secret: row.secret, createdAt: toDate(row.created_at) };
    });
  }

  deleteWebhook(inboxId: string): Promise<boolean> {
    return this.run('deleteWebhook', () =>
      this.db.transaction().execute(async (trx) => {
        await trx.deleteFrom('webhook_deliveries').where('inbox_id', '=', inboxId).execute();
        const result = await trx.deleteFrom('webhooks').where('inbox_id', '=', inboxId).executeTakeFirst();
        return Number(result.numDeletedRows) > 0;
      }),
    );
  }

  enqueueTest(inboxId: string, deliveryId: string, now: Date): Promise<boolean> {
    return this.run('enqueueTest', async () => {
      const at = toMillis(now);
      const result = await this.db
        .insertInto('webhook_deliveries')
        .columns(['id', 'inbox_id', 'message_id', 'event', 'attempts', 'due_at', 'created_at'])
        .expression((eb) =>
          eb
            .selectFrom('webhooks')
            .select([
              sql.val(deliveryId).as('id'),
              'inbox_id',
              sql<string | null>`null`.as('message_id'),
              sql.val('message.test').as('event'),
              sql.val(0).as('attempts'),
              sql.val(at).as('due_at'),
              sql.val(at).as('created_at'),
            ])
            .where('inbox_id', '=', inboxId),
        )
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
    });
  }

  claimDue(now: Date, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
    return this.run('claimDue', async () => {
      const at = toMillis(now);
      const count = Math.min(MAX_CLAIM, Math.max(0, Math.floor(limit)));
      if (count === 0) return [];
      // Most wake-ups find nothing due (a message to an inbox without a webhook, an idle
      // poll): one indexed read answers that, on SQLite off the writer thread, without the
      // UPDATE that would queue behind deliveries there.
      const anyDue = await this.db.selectFrom('webhook_deliveries').select('id').where('due_at', '<=', at).limit(1).executeTakeFirst();
      if (anyDue === undefined) return [];
      const leaseToken = newId();
      const rows = await this.db
        .updateTable('webhook_deliveries')
        .set({ due_at: at + leaseMs, lease_token: leaseToken })
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('webhook_deliveries')
            .select('id')
            .where('due_at', '<=', at)
            .orderBy('due_at')
            .limit(count)
            .$if(this.dialect.rowLocks, (q) => q.forUpdate().skipLocked()),
        )
        .returning(['id', 'inbox_id', 'message_id', 'event', 'attempts'])
        .execute();
      if (rows.length === 0) return [];
      const hooks = await this.db
        .selectFrom('webhooks as w')
        .innerJoin('inboxes as i', 'i.id', 'w.inbox_id')
        .select(['w.inbox_id', 'w.url', 'w.secret', 'i.username', 'i.domain'])
        .where('w.inbox_id', 'in', [...new Set(rows.map((row) => row.inbox_id))])
        .execute();
      const byInbox = new Map(hooks.map((hook) => [hook.inbox_id, hook]));
      const claimed: ClaimedDelivery[] = [];
      for (const row of rows) {
        // Gone since the claim (the webhook or inbox was deleted, and its deliveries with it).
        const hook = byInbox.get(row.inbox_id);
        if (hook === undefined) continue;
        claimed.push({
          id: row.id,
          inboxId: row.inbox_id,
          messageId: row.message_id,
          event: row.event as WebhookEvent,
          attempt: Number(row.attempts) + 1,
          url: hook.url,
          secret: hook.secret,
          address: `${hook.username}@${hook.domain}`,
          leaseToken,
        });
      }
      return claimed.sort((a, b) => (a.id < b.id ? -1 : 1));
    });
  }

  recordAttempt(record: AttemptRecord): Promise<boolean> {
    return this.run('recordAttempt', () =>
      this.db.transaction().execute(async (trx) => {
        const held = () =>
          trx
            .selectFrom('webhook_deliveries')
            .select(['inbox_id', 'message_id'])
            .where('id', '=', record.deliveryId)
            .where('lease_token', '=', record.leaseToken);
        let owned = await held().executeTakeFirst();
        if (owned === undefined) return false;
        if (this.dialect.rowLocks) {
          // The inbox first, then the delivery: the order of an inbox's deletion, so the two
          // wait for each other instead of deadlocking, and no attempt is written for an inbox
          // being deleted (its row is gone once the lock is granted).
          const inbox = await trx.selectFrom('inboxes').select('id').where('id', '=', owned.inbox_id).forKeyShare().executeTakeFirst();
          if (inbox === undefined) return false;
          owned = await held().forUpdate().executeTakeFirst();
          if (owned === undefined) return false;
        }
        await trx
          .insertInto('webhook_attempts')
          .values({
            inbox_id: owned.inbox_id,
            delivery_id: record.deliveryId,
            message_id: owned.message_id,
            attempt: record.attempt,
            status: record.status,
            error: record.error,
            at: toMillis(record.at),
          })
          .execute();
        // Older attempts than the kept ones go: at most one more row than kept is ever read here.
        await sql`delete from webhook_attempts where inbox_id = ${owned.inbox_id} and seq <= (
            select seq from webhook_attempts where inbox_id = ${owned.inbox_id} order by seq desc limit 1 offset ${WEBHOOK_ATTEMPTS_KEPT})`.execute(trx);
        if (record.nextAt === null) {
          await trx.deleteFrom('webhook_deliveries').where('id', '=', record.deliveryId).execute();
        } else {
          await trx
            .updateTable('webhook_deliveries')
            .set({ attempts: record.attempt, due_at: toMillis(record.nextAt), lease_token: null })
            .where('id', '=', record.deliveryId)
            .execute();
        }
        return true;
      }),
    );
  }

  releaseClaims(claims: readonly Pick<ClaimedDelivery, 'id' | 'leaseToken'>[], now: Date): Promise<number> {
    if (claims.length === 0) return Promise.resolve(0);
    return this.run('releaseClaims', () =>
      this.db.transaction().execute(async (trx) => {
        let released = 0;
        // As many statements as the node had attempts in flight (WEBHOOK_CONCURRENCY at most).
        for (const claim of claims) {
          const result = await trx
            .updateTable('webhook_deliveries')
            .set({ due_at: toMillis(now), lease_token: null })
            .where('id', '=', claim.id)
            .where('lease_token', '=', claim.leaseToken)
            .executeTakeFirst();
          released += Number(result.numUpdatedRows);
        }
        return released;
      }),
    );
  }

  listAttempts(inboxId: string, limit: number): Promise<WebhookAttempt[]> {
    return this.run('listAttempts', async () => {
      const rows = await this.db
        .selectFrom('webhook_attempts')
        .select(['delivery_id', 'message_id', 'attempt', 'status', 'error', 'at'])
        .where('inbox_id', '=', inboxId)
        .orderBy('seq', 'desc')
        .limit(Math.max(0, Math.floor(limit)))
        .execute();
      return rows.map((row) => ({
        deliveryId: row.delivery_id,
        messageId: row.message_id,
        attempt: Number(row.attempt),
        status: row.status === null ? null : Number(row.status),
        error: row.error,
        at: toDate(row.at),
      }));
    });
  }

  /**
   * Runs one operation, turning a backend failure into the store error of its cause; one the
   * database aborted to break a deadlock runs again, a bounded number of times (each is one
   * statement or one transaction, so nothing of the failed try was kept).
   */
  private async run<T>(operation: string, work: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await work();
      } catch (error) {
        if (attempt < MAX_TRIES && this.dialect.isRetryable(error)) continue;
        const message = `${operation} failed: ${error instanceof Error ? error.message : String(error)}`;
        const kind = this.dialect.classifyFailure(error);
        if (kind === 'unavailable') throw new StoreUnavailableError(message, { cause: error });
        if (kind === 'full') throw new StoreFullError(message, { cause: error });
        throw new StoreFailureError(message, { cause: error });
      }
    }
  }
}
