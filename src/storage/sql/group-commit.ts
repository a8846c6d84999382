/**
 * Most items in one group: bounds how long one commit holds the writer (SQLite's writer
 * thread: other transactions wait for it) while still amortising the fsync under load.
 */
export const GROUP_COMMIT_MAX_ITEMS = 64;

/** Writes a group of items in one transaction; resolves, once committed, with one result per item. */
export type CommitGroup<T, R> = (items: readonly T[]) => Promise<R[]>;

interface Waiting<T, R> {
  item: T;
  resolve: (result: R) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: the writes that arrive within one turn of the event loop (or while a group
 * is being committed) are written in one transaction, so one fsync covers them all; each
 * caller's promise settles only after the commit that holds its item. A group that fails is
 * retried item by item, so one bad item fails alone and a backend failure fails each caller.
 */
export class GroupCommitQueue<T, R> {
  private readonly waiting: Array<Waiting<T, R>> = [];
  private scheduled = false;
  private running: Promise<void> | undefined;

  constructor(
    private readonly commit: CommitGroup<T, R>,
    private readonly maxItems = GROUP_COMMIT_MAX_ITEMS,
  ) {}

  /** Queues one item; resolves with its result once its group is committed. */
  push(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves once nothing is queued or being committed (before closing the database). */
  async drain(): Promise<void> {
    while (this.running !== undefined || this.waiting.length > 0) {
      if (this.running === undefined) this.flush();
      await this.running;
    }
  }

  private schedule(): void {
    if (this.scheduled || this.running !== undefined) return;
    this.scheduled = true;
    // setImmediate runs after the I/O of this loop turn: every DATA that completed in it joins.
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }

  private flush(): void {
    if (this.running !== undefined || this.waiting.length === 0) return;
    const group = this.waiting.splice(0, this.maxItems);
    this.running = this.write(group).finally(() => {
      this.running = undefined;
      if (this.waiting.length > 0) this.schedule();
    });
  }

  private async write(group: Array<Waiting<T, R>>): Promise<void> {
    try {
      const results = await this.commit(group.map((waiting) => waiting.item));
      group.forEach((waiting, i) => waiting.resolve(results[i] as R));
      return;
    } catch (error) {
      if (group.length === 1) {
        group[0]?.reject(error);
        return;
      }
    }
    // The group failed: each item alone, so that only what fails is refused.
    for (const waiting of group) {
      try {
        const [result] = await this.commit([waiting.item]);
        waiting.resolve(result as R);
      } catch (error) {
        waiting.reject(error);
      }
    }
  }
}
