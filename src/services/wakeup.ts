/**
 * A level-triggered wake-up flag: set() any number of times; wait() resolves at once when it
 * was set since the last reset(), else at the next set() or after `timeoutMs`. Readers reset
 * before they read the store, so an event during the read is never lost.
 */
export class Wakeup {
  private flagged = false;
  private waiter: (() => void) | undefined;

  set(): void {
    this.flagged = true;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.();
  }

  reset(): void {
    this.flagged = false;
  }

  /** Resolves true when woken, false when `timeoutMs` passed first. */
  wait(timeoutMs: number): Promise<boolean> {
    if (this.flagged) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiter = undefined;
        resolve(false);
      }, Math.max(0, timeoutMs));
      this.waiter = () => {
        clearTimeout(timer);
        resolve(true);
      };
    });
  }
}
