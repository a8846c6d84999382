import { setImmediate } from 'node:timers/promises';
import { CHECK_READ_BATCH } from '../domain/check-limits.js';
import type { MessageView } from '../domain/types.js';
import type { MessagePage, PageListing, PageQuery } from '../ports/message-reads.js';

/** The ids of a page as a store read them from its index: `limit` + 1 of them at most, in page order. */
export interface PageIds {
  ids: readonly string[];
  beforeFound: boolean;
  afterFound?: boolean;
}

/**
 * readPage's rules over the ids a store read (`limit` + 1, the one more telling whether
 * messages exist beyond the limit), the same for every store: items in id order, a message
 * the listing holds taken from it, the others read CHECK_READ_BATCH at a time with a turn of
 * the event loop between reads (SQLite reads on this thread) and only while the page has
 * room, so no body past the budget is read. A message deleted since its id was read is left
 * out.
 */
export async function assemblePage<T>(
  found: PageIds,
  query: Pick<PageQuery, 'limit' | 'maxBytes'>,
  listing: PageListing<T>,
  readBodies: (ids: readonly string[]) => Promise<MessageView[]>,
): Promise<MessagePage<T>> {
  const { ids, beforeFound, afterFound } = found;
  const tail = afterFound === undefined ? {} : { afterFound };
  if (!beforeFound || afterFound === false) return { messages: [], hasMore: false, beforeFound, ...tail };
  const limit = Math.max(0, Math.floor(query.limit));
  const maxBytes = query.maxBytes ?? Infinity;
  const items: T[] = [];
  const read = new Map<string, T>();
  let reads = 0;
  let used = 0;
  for (const [index, id] of ids.entries()) {
    if (items.length >= limit) return { messages: items, hasMore: true, beforeFound, ...tail };
    let item = listing.held(id) ?? read.get(id);
    if (item === undefined) {
      const batch = ids.slice(index).filter((next) => !read.has(next) && listing.held(next) === undefined).slice(0, CHECK_READ_BATCH);
      if (reads > 0) await setImmediate();
      reads += 1;
      for (const message of await readBodies(batch)) read.set(message.id, listing.take(message));
      item = read.get(id);
      // Deleted since its id was read.
      if (item === undefined) continue;
    }
    const size = listing.bytes(item);
    if (items.length > 0 && used + size > maxBytes) return { messages: items, hasMore: true, beforeFound, ...tail };
    items.push(item);
    used += size;
  }
  // Every id went in; when one more than the limit was read, a deletion made room for it and
  // what lies beyond it is unknown.
  return { messages: items, hasMore: ids.length > limit, beforeFound, ...tail };
}
