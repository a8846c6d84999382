import { MAX_TIMER_MS } from '../domain/live-limits.js';

/**
 * What a held live client (an event stream, inbox-follower.ts; a waiting check, mail-wait.ts)
 * does between two events, shared: it is one object that runs `pump()` when something wakes
 * it and holds no promise, generator or closure of its own while it is idle (a held client's
 * memory is the node's capacity: docs/scaling.md "Live mail").
 *
 * - `woken` says an event came since the last read; the subclass clears it only right before
 *   it reads, so no event is ever slept through.
 * - wake() starts the pump in a microtask, after the other listeners of the same event, so the
 *   clients one event woke share one read (shared-reads.ts). While a pump runs, a wake-up only
 *   sets flags that the running pump then sees.
 * - One timer per client, with the client as the timer's argument rather than a closure.
 * - `settled` settles once: with succeed(), or with fail() (also when the pump throws); the
 *   timer is cleared and release() undoes the subclass's subscriptions.
 */
export abstract class WokenPump<T> {
  /** The client's outcome: settles once, when it is over. */
  readonly settled: Promise<T>;
  /** An event came since the last read: read again. */
  protected woken = false;
  /** A pump runs or is due: true until the subclass's constructor starts the first one. */
  private running = true;
  private finished = false;
  private timer: NodeJS.Timeout | undefined;
  private resolve: (value: T) => void = () => undefined;
  private reject: (error: unknown) => void = () => undefined;

  constructor() {
    this.settled = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  /** The work of one wake-up; it calls succeed() or fail() when the client is over. */
  protected abstract pump(): Promise<void>;

  /** Undoes the subclass's subscriptions; called once, when the client is over. */
  protected abstract release(): void;

  /** Runs the first pump: the last step of the subclass's constructor. */
  protected start(): void {
    void this.run();
  }

  /** Runs the pump (after the other listeners of the current event) unless one runs already. */
  protected wake(): void {
    if (this.running || this.finished) return;
    this.running = true;
    queueMicrotask(() => void this.run());
  }

  /** Wakes the client in `ms` (at most MAX_TIMER_MS, ~24.8 days), replacing the timer it had. */
  protected armTimer(ms: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(timerDue, Math.min(MAX_TIMER_MS, Math.max(0, ms)), this);
  }

  /** Called by the client's timer. */
  timerDue(): void {
    this.timer = undefined;
    this.wake();
  }

  protected succeed(value: T): void {
    if (this.end()) this.resolve(value);
  }

  protected fail(error: unknown): void {
    if (this.end()) this.reject(error);
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      await this.pump();
    } catch (error) {
      this.fail(error);
    } finally {
      this.running = false;
    }
  }

  /** True the first time: the client is over now. */
  private end(): boolean {
    if (this.finished) return false;
    this.finished = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.release();
    return true;
  }
}

function timerDue(client: { timerDue(): void }): void {
  client.timerDue();
}
