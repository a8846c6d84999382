/**
 * "The client went away": what the transport of a held client (a waiting check, an event
 * stream) tells the wait or the follower serving it (mail-wait.ts, inbox-follower.ts). A
 * one-shot flag with one listener, because each held client has exactly one of each.
 *
 * An AbortController would say the same, but its signal is an EventTarget: with one listener
 * it took 981 B of heap in a script on Node 24, and in the service's heap snapshots a held
 * client came to ~0.35 KiB less without it; this is 40 B. A node holds thousands of clients,
 * and an answered long-poll leaves its objects as old-generation garbage (docs/scaling.md
 * "Live mail", "Held clients as objects"; docs/benchmarks.md "What a held long-poll is made of").
 */
export class ClientGone {
  private isRaised = false;
  private listener: (() => void) | undefined;

  /** True once the client went away. */
  get raised(): boolean {
    return this.isRaised;
  }

  /**
   * Says the client went away; the listener, if any, runs once (later calls do nothing). An
   * arrow property, so that a transport can pass it as a `close` listener as it is.
   */
  readonly raise = (): void => {
    if (this.isRaised) return;
    this.isRaised = true;
    const listener = this.listener;
    this.listener = undefined;
    listener?.();
  };

  /**
   * Sets the one listener, replacing any. Like an AbortSignal's, it is not called when the
   * client is already gone: the holder reads `raised` first.
   */
  listen(listener: () => void): void {
    if (!this.isRaised) this.listener = listener;
  }

  /** Forgets the listener (its wait or follower is over). */
  unlisten(): void {
    this.listener = undefined;
  }
}
