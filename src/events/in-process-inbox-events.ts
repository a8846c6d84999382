import type { InboxEvent, InboxEventListener, InboxEvents } from '../ports/inbox-events.js';

/**
 * The event path of one node (memory, SQLite): publish calls the inbox's listeners at once.
 * Also the local half of the PostgreSQL bus. Listeners are plain callbacks (wake-ups); one
 * that throws is skipped, never allowed to stop the others.
 */
export class InProcessInboxEvents implements InboxEvents {
  private readonly listeners = new Map<string, Set<InboxEventListener>>();
  private closed = false;

  publish(event: InboxEvent): void {
    if (this.closed) return;
    // Events of no one inbox (resync, a change of access) reach every subscriber.
    const inboxId = event.type === 'resync' ? undefined : event.inboxId;
    if (inboxId === undefined) {
      for (const set of [...this.listeners.values()]) for (const listener of [...set]) call(listener, event);
      return;
    }
    const set = this.listeners.get(inboxId);
    if (set === undefined) return;
    for (const listener of [...set]) call(listener, event);
  }

  subscribe(inboxId: string, listener: InboxEventListener): () => void {
    let set = this.listeners.get(inboxId);
    if (set === undefined) {
      set = new Set();
      this.listeners.set(inboxId, set);
    }
    set.add(listener);
    return () => {
      const current = this.listeners.get(inboxId);
      if (current === undefined) return;
      current.delete(listener);
      if (current.size === 0) this.listeners.delete(inboxId);
    };
  }

  /** Subscribed listeners in all (metrics, tests). */
  get size(): number {
    let n = 0;
    for (const set of this.listeners.values()) n += set.size;
    return n;
  }

  start(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    return Promise.resolve();
  }
}

function call(listener: InboxEventListener, event: InboxEvent): void {
  try {
    listener(event);
  } catch {
    // A wake-up that fails costs its subscriber a wake-up, not the others theirs.
  }
}
