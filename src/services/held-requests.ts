import { clientKey } from '../domain/client-key.js';
import { AppError } from '../domain/errors.js';
import { HELD_PER_CLIENT, HELD_PER_NODE, HELD_PER_SESSION } from '../domain/live-limits.js';

/** One held request: release it when it ends (idempotent); `signal` aborts at shutdown. */
export interface Hold {
  release(): void;
  readonly signal: AbortSignal;
  /**
   * Calls `listener` once at shutdown (at once when the node is already stopping); returns
   * the function that cancels it. Use this rather than a listener on `signal`: every hold
   * shares that one signal, and an AbortSignal adds and removes a listener in time linear in
   * the listeners it has (90 µs each at 10,000 held requests, paid by every re-issued wait).
   */
  onShutdown(listener: () => void): () => void;
}

/** Retry-After of a refused hold: one of the caller's held requests ends within a minute. */
const HELD_RETRY_AFTER_SECONDS = 5;

/**
 * Counts the requests a node holds open (waits and streams together) per session, per client
 * address (clientKey) and in all, refusing past HELD_PER_SESSION / HELD_PER_CLIENT /
 * HELD_PER_NODE with rate_limited. shutdown() aborts every hold's signal, so each answers
 * with what it has; drained() resolves when none is left.
 */
export class HeldRequests {
  private readonly perSession = new Map<string, number>();
  private readonly perClientCount = new Map<string, number>();
  private total = 0;
  private readonly stopping = new AbortController();
  /** The holds' shutdown listeners: a Set adds and removes in constant time. */
  private readonly shutdownListeners = new Set<() => void>();
  private idle: (() => void)[] = [];

  /**
   * `perClient`: apply HELD_PER_SESSION and HELD_PER_CLIENT (RATE_LIMITS=off lifts them for
   * benchmarks and tests; HELD_PER_NODE always holds).
   */
  constructor(private readonly perClient = true) {}

  /** Takes a slot, or throws rate_limited (429) when a cap is reached or the node is stopping. */
  acquire(sessionId: string, clientAddress: string): Hold {
    const client = clientKey(clientAddress);
    if (this.stopping.signal.aborted) throw new AppError('unavailable', 'The server is shutting down.');
    const overClient = this.perClient && ((this.perSession.get(sessionId) ?? 0) >= HELD_PER_SESSION || (this.perClientCount.get(client) ?? 0) >= HELD_PER_CLIENT);
    if (overClient || this.total >= HELD_PER_NODE) {
      throw new AppError('rate_limited', 'Too many held requests (wait or event streams) open at once.', { retryAfterSeconds: HELD_RETRY_AFTER_SECONDS });
    }
    bump(this.perSession, sessionId, 1);
    bump(this.perClientCount, client, 1);
    this.total += 1;
    return new HeldSlot(this, sessionId, client);
  }

  /** HeldSlot.onShutdown (see Hold). */
  addShutdownListener(listener: () => void): () => void {
    if (this.stopping.signal.aborted) {
      listener();
      return () => undefined;
    }
    // A wrapper of its own: the same function registered twice is cancelled separately.
    const entry = () => listener();
    this.shutdownListeners.add(entry);
    return () => this.shutdownListeners.delete(entry);
  }

  /** Gives a slot back: for HeldSlot.release only, which calls it once per slot. */
  releaseSlot(sessionId: string, client: string): void {
    bump(this.perSession, sessionId, -1);
    bump(this.perClientCount, client, -1);
    this.total -= 1;
    if (this.total === 0) for (const resolve of this.idle.splice(0)) resolve();
  }

  /** The signal every hold shares: aborted at shutdown. */
  get signal(): AbortSignal {
    return this.stopping.signal;
  }

  /** Held requests now. */
  get size(): number {
    return this.total;
  }

  /** Aborts every hold (they answer at once) and refuses new ones. */
  shutdown(): void {
    if (this.stopping.signal.aborted) return;
    this.stopping.abort();
    const listeners = [...this.shutdownListeners];
    this.shutdownListeners.clear();
    for (const listener of listeners) listener();
  }

  /** Resolves when no hold is left, or after `timeoutMs`. */
  drained(timeoutMs: number): Promise<void> {
    if (this.total === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.idle.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

function bump(counts: Map<string, number>, key: string, by: number): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}

/**
 * A Hold as a small object with its methods on the prototype: a held request keeps one for
 * its whole life, so it costs fields, not closures (docs/scaling.md "Live mail").
 */
class HeldSlot implements Hold {
  private released = false;

  constructor(
    private readonly owner: HeldRequests,
    private readonly sessionId: string,
    private readonly client: string,
  ) {}

  get signal(): AbortSignal {
    return this.owner.signal;
  }

  onShutdown(listener: () => void): () => void {
    return this.owner.addShutdownListener(listener);
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.owner.releaseSlot(this.sessionId, this.client);
  }
}
