import type { StoreMaintenance } from '../ports/store-maintenance.js';

/**
 * Inboxes per recountUsage batch, one transaction each. On PostgreSQL a batch keeps its inbox
 * rows locked until it commits (deliveries to them wait), and on SQLite it holds the one
 * writer: 1,000 inboxes (one range count of their messages, one update per wrong counter)
 * keep that short, while a pass over a million inboxes is still only a thousand transactions.
 */
export const RECOUNT_BATCH_INBOXES = 1000;

/** What a whole recount did. */
export interface RecountTotals {
  /** Inboxes recounted. */
  checked: number;
  /** Of those, inboxes whose stored usage was wrong and is now right. */
  corrected: number;
}

/**
 * Recounts the usage counters of every inbox (`tempinbox recount-usage`; docs/scaling.md
 * "Migrations"): batch after batch in id order, each going on after the last one's last inbox,
 * until a batch comes back short. Each full batch moves past `batchSize` inboxes, so the loop
 * ends after at most (inboxes / batchSize) + 1 batches; inboxes created meanwhile keep exact
 * counters of their own.
 */
export async function recountAllUsage(store: Pick<StoreMaintenance, 'recountUsage'>, batchSize = RECOUNT_BATCH_INBOXES): Promise<RecountTotals> {
  const limit = Math.max(1, Math.floor(batchSize));
  const totals: RecountTotals = { checked: 0, corrected: 0 };
  let afterId: string | undefined;
  for (;;) {
    const batch = await store.recountUsage(afterId === undefined ? { limit } : { afterId, limit });
    totals.checked += batch.checked;
    totals.corrected += batch.corrected;
    if (batch.checked < limit || batch.lastId === undefined) return totals;
    afterId = batch.lastId;
  }
}
