/**
 * Reads that the live clients of one inbox make at the same moment, done once (docs/scaling.md
 * "Live mail"). One message wakes every stream and waiter of its inbox together, and each of
 * them asks the store the same question ("what came after message X?"): ten workers of a test
 * run following one inbox cost ten reads, ten copies of the answer and ten serialisations of
 * it without this; with it, one of each.
 *
 * Sharing must never hand a caller an answer older than the event that woke it: a read that
 * started before that event may have missed the message the event announces. So every event
 * that wakes a reader is counted first (woke()), a reader notes the count when it is woken
 * (mark, taken where it resets its wake-up, before it reads), and it joins only a read that
 * started at that count or later. A read that started earlier is not joined but replaced.
 *
 * Bounded: an entry lives while its read is in flight, so there are never more entries than
 * reads in flight, which the held-request caps bound (docs/api.md "Waiting for mail").
 * Callers must treat a shared answer as read-only: other callers hold the same objects.
 */
export class SharedReads {
  private readonly inFlight = new Map<string, { startedAt: number; answer: Promise<unknown> }>();
  private wakes = 0;

  /** Counts an event that wakes readers: call it before setting their wake-ups. */
  woke(): void {
    this.wakes += 1;
  }

  /** The count of wake-ups so far: take it when resetting a wake-up, just before reading. */
  get mark(): number {
    return this.wakes;
  }

  /**
   * The answer of `read()`, shared with the callers that ask the same `key` while it is in
   * flight, provided it started at `mark` or later (see the class comment).
   */
  read<T>(key: string, mark: number, read: () => Promise<T>): Promise<T> {
    const shared = this.inFlight.get(key);
    if (shared !== undefined && shared.startedAt >= mark) return shared.answer as Promise<T>;
    const entry = { startedAt: this.wakes, answer: read() };
    this.inFlight.set(key, entry);
    const forget = () => {
      if (this.inFlight.get(key) === entry) this.inFlight.delete(key);
    };
    entry.answer.then(forget, forget);
    return entry.answer as Promise<T>;
  }

  /** Reads in flight (tests). */
  get size(): number {
    return this.inFlight.size;
  }
}
