/**
 * A bounded map whose entries expire: at most `maxEntries`, the oldest dropped first past it,
 * each entry gone `ttlMs` after it was set. The sender checks keep DNS answers and SPF
 * verdicts in one each, so that mail from one sender does the same work once a minute.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { expiresAt: number; value: V }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The value of `key`, unless it is missing or expired. */
  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAt > this.now()) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  /** Keeps `value` for ttlMs, dropping the oldest entries to stay within maxEntries. */
  set(key: string, value: V): void {
    this.entries.delete(key);
    // Oldest first: a Map iterates in insertion order.
    while (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done === true) break;
      this.entries.delete(oldest.value);
    }
    this.entries.set(key, { expiresAt: this.now() + this.ttlMs, value });
  }

  /** Drops `key` if it still holds `value` (a later set() is kept). */
  deleteIf(key: string, value: V): void {
    if (this.entries.get(key)?.value === value) this.entries.delete(key);
  }

  /** Entries held now, expired ones not yet dropped included (tests, metrics). */
  get size(): number {
    return this.entries.size;
  }
}
