import type { MessageView } from '../domain/types.js';
import type { PageListing } from '../ports/message-reads.js';
import type { ListedFragment } from '../services/check-page.js';
import { presentMessage } from './presenters.js';

/**
 * Bytes of listing JSON kept in all: a few hundred polled inboxes of ordinary mail, small
 * beside the process's ~150 MB, and a bound whatever is polled.
 */
export const LISTING_CACHE_BYTES = 16 * 1024 * 1024;

/**
 * Largest fragment kept: ordinary messages (a few KB) stay; a long newsletter cut at
 * CHECK_FIELD_BYTES would push out dozens of them and is cheap to rebuild by comparison.
 */
export const LISTING_CACHE_ENTRY_BYTES = 64 * 1024;

/**
 * A message's JSON in a check listing, built once and reused (docs/architecture.md
 * "Serialise once"): a stored message never changes, and its id is never reused, so a
 * fragment is valid as long as the message is listed; which messages are listed is read from
 * the database on every check. Least recently used fragments go first. It is the check's
 * PageListing: the store reads no body of a message whose fragment is kept.
 */
export class ListingJsonCache implements PageListing<ListedFragment> {
  private readonly entries = new Map<string, ListedFragment>();
  private keptBytes = 0;

  constructor(
    private readonly maxBytes = LISTING_CACHE_BYTES,
    private readonly maxEntryBytes = LISTING_CACHE_ENTRY_BYTES,
  ) {}

  cached(messageId: string): ListedFragment | undefined {
    const fragment = this.entries.get(messageId);
    if (fragment !== undefined) {
      // Most recently used last: Map keeps insertion order.
      this.entries.delete(messageId);
      this.entries.set(messageId, fragment);
    }
    return fragment;
  }

  build(message: MessageView): ListedFragment {
    const text = JSON.stringify(presentMessage(message));
    const fragment = { text, bytes: Buffer.byteLength(text, 'utf8') };
    if (fragment.bytes <= this.maxEntryBytes && !this.entries.has(message.id)) {
      this.entries.set(message.id, fragment);
      this.keptBytes += fragment.bytes;
      for (const [id, oldest] of this.entries) {
        if (this.keptBytes <= this.maxBytes) break;
        this.entries.delete(id);
        this.keptBytes -= oldest.bytes;
      }
    }
    return fragment;
  }

  held(messageId: string): ListedFragment | undefined {
    return this.cached(messageId);
  }

  take(message: MessageView): ListedFragment {
    return this.build(message);
  }

  /** +1: the comma between messages in the answer. */
  bytes(fragment: ListedFragment): number {
    return fragment.bytes + 1;
  }

  /** Fragments and bytes kept (tests, metrics). */
  get size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.keptBytes };
  }
}
