/** localStorage key of the ids of messages this browser has opened. */
const KEY = 'tempinbox.seen';
/** Ids kept: enough for every message of a few inboxes, bounded so storage cannot grow forever. */
const MAX_IDS = 2000;

/** Which messages were opened in this browser: unread markers are local, the API has none. */
export class SeenStore {
  private readonly ids: Set<string>;

  constructor() {
    let stored: unknown = [];
    try {
      stored = JSON.parse(localStorage.getItem(KEY) ?? '[]');
    } catch {
      // Storage disabled or corrupt: every message starts unread, nothing breaks.
    }
    this.ids = new Set(Array.isArray(stored) ? stored.filter((id): id is string => typeof id === 'string') : []);
  }

  /** Whether the message was opened before. */
  has(id: string): boolean {
    return this.ids.has(id);
  }

  /** Marks a message as read and saves the set (oldest ids dropped past MAX_IDS). */
  add(id: string): void {
    if (this.ids.has(id)) return;
    this.ids.add(id);
    const list = [...this.ids].slice(-MAX_IDS);
    try {
      localStorage.setItem(KEY, JSON.stringify(list));
    } catch {
      // Private mode or a full quota: the marker lasts for this page only.
    }
  }
}
