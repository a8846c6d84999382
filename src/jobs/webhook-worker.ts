import type { Logger } from 'pino';
import type { Clock } from '../domain/clock.js';
import type { ClaimedDelivery, WebhookStore } from '../ports/webhook-store.js';
import type { AttemptResult, WebhookDeliveryService, WebhookOutcome } from '../services/webhook-delivery-service.js';

/**
 * How long a claimed delivery belongs to the node that claimed it: longer than an attempt may
 * take (WEBHOOK_ATTEMPT_DEADLINE_MS, 10 s, plus recording it), so a live node never loses a
 * claim to another; short enough that the deliveries of a node that died come back to the
 * others (or to it, restarted) within half a minute.
 */
export const WEBHOOK_LEASE_MS = 30_000;

/**
 * Longest wait between two looks for due deliveries: other nodes' messages (PostgreSQL), and
 * retries whose time came, start within this. One indexed read per second per node.
 */
export const WEBHOOK_POLL_INTERVAL_MS = 1000;

/**
 * How long stop() waits for attempts in flight. An attempt not finished by then is abandoned
 * unrecorded and its claim given back: its delivery stays owed, due at once for the other
 * nodes or this one restarted (at least once; receivers dedupe by Tempinbox-Delivery).
 */
export const WEBHOOK_DRAIN_MS = 3000;

/** Claims in one wake-up at most, each of up to WEBHOOK_CONCURRENCY deliveries: a bound on one pump's loop. */
const MAX_CLAIMS_PER_PUMP = 64;

/** What the worker needs. */
export interface WebhookWorkerOptions {
  webhooks: Pick<WebhookStore, 'claimDue' | 'releaseClaims'>;
  delivery: Pick<WebhookDeliveryService, 'attempt'>;
  /** WEBHOOK_CONCURRENCY: attempts in flight on this node at most. */
  concurrency: number;
  clock: Clock;
  logger: Logger;
  /** Called once per recorded attempt (metrics). */
  onOutcome?: (outcome: WebhookOutcome) => void;
  /** Tests only: shorter or longer than the constants above. */
  pollIntervalMs?: number;
  leaseMs?: number;
  drainMs?: number;
}

/**
 * Delivers webhooks: claims due deliveries and attempts them, at most `concurrency` at once
 * (docs/api.md "Webhooks"). Woken in-process when a delivery is owed (a message committed, a
 * test asked), so a first attempt starts at once; otherwise it looks every
 * WEBHOOK_POLL_INTERVAL_MS (other nodes' messages) or when the earliest retry it scheduled is
 * due. start(), wake(), awaited stop() (the Sweeper's shape).
 */
export class WebhookWorker {
  /** Attempts in flight, with the claim each holds. */
  private readonly inFlight = new Map<Promise<void>, ClaimedDelivery>();
  private pumping: Promise<void> | undefined;
  private wakeAgain = false;
  private stopped = true;
  private timer: NodeJS.Timeout | undefined;
  /** When the timer fires (epoch ms); Infinity: not armed. */
  private timerAt = Number.POSITIVE_INFINITY;
  private readonly pollIntervalMs: number;
  private readonly leaseMs: number;

  constructor(private readonly options: WebhookWorkerOptions) {
    this.pollIntervalMs = options.pollIntervalMs ?? WEBHOOK_POLL_INTERVAL_MS;
    this.leaseMs = options.leaseMs ?? WEBHOOK_LEASE_MS;
  }

  /** Starts looking: at once (deliveries owed before a restart), then on wake-ups and the poll. */
  start(): void {
    this.stopped = false;
    this.wake();
  }

  /** Looks for due deliveries now (a delivery was just owed); cheap to call often. */
  wake(): void {
    if (this.stopped) return;
    if (this.pumping !== undefined) {
      this.wakeAgain = true;
      return;
    }
    this.pumping = this.pump().finally(() => {
      this.pumping = undefined;
      this.armAt(Date.now() + this.pollIntervalMs);
      if (this.wakeAgain) {
        this.wakeAgain = false;
        this.wake();
      }
    });
  }

  /** Attempts in flight now (tests, and the bound's proof). */
  get active(): number {
    return this.inFlight.size;
  }

  /**
   * Stops claiming, then waits up to the drain bound for the attempts in flight, and gives
   * back the claims of those still unfinished, so that their deliveries do not wait for a
   * lease to run out.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.disarm();
    await this.pumping;
    if (this.inFlight.size === 0) return;
    let timeout: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...this.inFlight.keys()]),
      new Promise<void>((resolve) => {
        timeout = setTimeout(resolve, this.options.drainMs ?? WEBHOOK_DRAIN_MS);
      }),
    ]);
    clearTimeout(timeout);
    const unfinished = [...this.inFlight.values()];
    if (unfinished.length === 0) return;
    try {
      const released = await this.options.webhooks.releaseClaims(unfinished, this.options.clock.now());
      this.options.logger.info({ unfinished: unfinished.length, released }, 'webhook attempts unfinished at stop; their deliveries are due again');
    } catch (error) {
      this.options.logger.warn({ err: error, unfinished: unfinished.length }, 'webhook claims could not be given back; retried after their lease');
    }
  }

  /** Claims as many due deliveries as there is room for, until none is left or the room is full. */
  private async pump(): Promise<void> {
    for (let round = 0; round < MAX_CLAIMS_PER_PUMP && !this.stopped; round += 1) {
      const room = this.options.concurrency - this.inFlight.size;
      if (room <= 0) return;
      let claimed: ClaimedDelivery[];
      try {
        claimed = await this.options.webhooks.claimDue(this.options.clock.now(), room, this.leaseMs);
      } catch (error) {
        this.options.logger.warn({ err: error }, 'webhook claim failed; trying again at the next poll');
        return;
      }
      for (const delivery of claimed) this.launch(delivery);
      if (claimed.length < room) return;
    }
  }

  private launch(delivery: ClaimedDelivery): void {
    const attempt: Promise<void> = this.options.delivery
      .attempt(delivery)
      .then((result) => this.finished(delivery, result))
      .catch((error: unknown) => {
        // The store failed: the delivery stays owed and comes back when its lease runs out.
        this.options.logger.warn({ err: error, delivery_id: delivery.id }, 'webhook attempt could not be recorded; retried after its lease');
      })
      .finally(() => {
        this.inFlight.delete(attempt);
        // A slot is free: more may be due.
        this.wake();
      });
    this.inFlight.set(attempt, delivery);
  }

  /** Counts and logs an attempt (never its URL, secret or body), and wakes for its retry. */
  private finished(delivery: ClaimedDelivery, result: AttemptResult): void {
    if (!result.recorded) return;
    this.options.onOutcome?.(result.outcome);
    const fields = { delivery_id: delivery.id, inbox_id: delivery.inboxId, attempt: delivery.attempt, status: result.status, error: result.error };
    if (result.outcome === 'delivered') this.options.logger.debug(fields, 'webhook delivered');
    else if (result.outcome === 'retried') this.options.logger.info({ ...fields, next_at: result.nextAt?.toISOString() }, 'webhook attempt failed; retrying later');
    else this.options.logger.warn(fields, 'webhook delivery given up');
    // The retry's time is the clock's; the timer runs on the process's.
    if (result.nextAt !== null) this.armAt(Date.now() + (result.nextAt.getTime() - this.options.clock.now().getTime()));
  }

  /** Makes the timer fire by `at` (epoch ms) at the latest: one timer for the poll and the earliest retry this node knows. */
  private armAt(at: number): void {
    if (this.stopped || at >= this.timerAt) return;
    this.disarm();
    this.timerAt = at;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerAt = Number.POSITIVE_INFINITY;
      this.wake();
    }, Math.max(0, at - Date.now()));
    // The worker alone never keeps the process alive.
    this.timer.unref();
  }

  private disarm(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
  }
}
