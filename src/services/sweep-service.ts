import type { Clock } from '../domain/clock.js';
import type { SweepCounts } from '../domain/types.js';
import type { StoreMaintenance } from '../ports/store-maintenance.js';

/** Rows per delete batch: short transactions keep SMTP commits and polls flowing meanwhile. */
export const SWEEP_BATCH_SIZE = 500;
/** Batches per run at most, so one run is bounded even after a long outage; the next run continues. */
export const SWEEP_MAX_BATCHES_PER_RUN = 200;

/** Deletes expired inboxes (with messages and attachments) and sessions in bounded batches. */
export class SweepService {
  constructor(
    private readonly store: Pick<StoreMaintenance, 'deleteExpired'>,
    private readonly clock: Clock,
  ) {}

  /** One pass: batches until a batch comes back short, the cap is hit, or `signal` aborts. */
  async runOnce(signal?: AbortSignal): Promise<SweepCounts> {
    const total: SweepCounts = { inboxes: 0, messages: 0, sessions: 0 };
    for (let batch = 0; batch < SWEEP_MAX_BATCHES_PER_RUN && !signal?.aborted; batch += 1) {
      const counts = await this.store.deleteExpired(this.clock.now(), SWEEP_BATCH_SIZE);
      total.inboxes += counts.inboxes;
      total.messages += counts.messages;
      total.sessions += counts.sessions;
      if (counts.inboxes < SWEEP_BATCH_SIZE && counts.sessions < SWEEP_BATCH_SIZE) break;
      // Yield to the event loop between batches so requests interleave with the sweep.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    return total;
  }
}
