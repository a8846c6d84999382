import { AppError } from '../domain/errors.js';

/** How many parses may run at once, and when one stops counting against the others. */
export interface ParseSlotOptions {
  /** Parses running at once in the ordinary case (one per worker thread). */
  threads: number;
  /** Parses that may run beside those once they have turned out slow. */
  spares: number;
  /** How long a parse runs before it counts as slow and moves to a spare slot (ms). */
  slowMs: number;
  /** Longest wait for a slot (ms); past it the parse is refused with `unavailable`. */
  maxWaitMs: number;
}

/** A slot held by one running parse; release it exactly once when the parse is over. */
export interface ParseSlot {
  release(): void;
}

interface Running {
  /** Has run `slowMs`: may move to a spare slot. */
  due: boolean;
  slow: boolean;
  timer: NodeJS.Timeout;
}

interface Waiting {
  grant: (slot: ParseSlot) => void;
  refuse: (error: AppError) => void;
  timer: NodeJS.Timeout;
}

/**
 * Admission to the parse workers, so that one message's parse never delays or degrades
 * another's. A parse holds a slot from when it is handed to a worker to when it is over, and
 * its deadline starts then, never while it waits: a message queued behind a stuck one gets a
 * whole parse. Up to `threads` parses run at once; one still running after `slowMs` (a huge
 * or hostile message) moves to one of `spares` extra slots, so that the messages behind it
 * start at once in another worker instead of waiting for it. Waiters are served in order,
 * each for at most `maxWaitMs` (then `unavailable`: SMTP 451, the sender retries later and
 * the message is parsed whole then). The caller bounds how many wait.
 */
export class ParseSlots {
  private readonly running = new Set<Running>();
  private readonly waiting: Waiting[] = [];
  private slowCount = 0;
  private closed = false;

  constructor(private readonly options: ParseSlotOptions) {}

  /** A slot as soon as one is free (in order of asking); rejects with `unavailable` past `maxWaitMs` or after close(). */
  acquire(): Promise<ParseSlot> {
    if (this.closed) return Promise.reject(new AppError('unavailable', 'The mail parser is shut down.'));
    if (this.waiting.length === 0 && this.hasRoom()) return Promise.resolve(this.start());
    return new Promise((grant, refuse) => {
      const entry: Waiting = {
        grant,
        refuse,
        timer: setTimeout(() => {
          const at = this.waiting.indexOf(entry);
          if (at !== -1) this.waiting.splice(at, 1);
          refuse(new AppError('unavailable', 'Every mail parser stayed busy too long.'));
        }, this.options.maxWaitMs),
      };
      this.waiting.push(entry);
    });
  }

  /** Refuses every waiter and every later acquire(); running parses keep their slots until released. */
  close(): void {
    this.closed = true;
    for (const entry of this.waiting.splice(0)) {
      clearTimeout(entry.timer);
      entry.refuse(new AppError('unavailable', 'The mail parser is shut down.'));
    }
  }

  /** Parses running now, and how many of them run in spare slots (for tests and metrics). */
  get load(): { running: number; slow: number; waiting: number } {
    return { running: this.running.size, slow: this.slowCount, waiting: this.waiting.length };
  }

  private hasRoom(): boolean {
    const { threads, spares } = this.options;
    return this.running.size - this.slowCount < threads && this.running.size < threads + spares;
  }

  private start(): ParseSlot {
    const entry: Running = {
      due: false,
      slow: false,
      timer: setTimeout(() => {
        entry.due = true;
        this.promote();
      }, this.options.slowMs),
    };
    this.running.add(entry);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        clearTimeout(entry.timer);
        this.running.delete(entry);
        if (entry.slow) this.slowCount -= 1;
        this.promote();
      },
    };
  }

  /**
   * Moves the parses that have run `slowMs` or more into free spare slots, oldest first, then
   * starts waiters while there is room.
   */
  private promote(): void {
    for (const entry of this.running) {
      if (this.slowCount >= this.options.spares) break;
      if (entry.slow || !entry.due) continue;
      entry.slow = true;
      this.slowCount += 1;
    }
    while (this.waiting.length > 0 && this.hasRoom()) {
      const next = this.waiting.shift();
      if (next === undefined) break;
      clearTimeout(next.timer);
      next.grant(this.start());
    }
  }
}
