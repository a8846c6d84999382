import { setImmediate } from 'node:timers/promises';
import {
  CHECK_BUDGET_BYTES,
  CHECK_ENVELOPE_BYTES,
  CHECK_FIELD_BYTES,
  CHECK_READ_BATCH,
} from '../domain/check-limits.js';
import { AppError } from '../domain/errors.js';
import type { MessageView } from '../domain/types.js';
import { hasFilter, type MailStore, type MessageFilter } from '../ports/mail-store.js';

/** Which messages a check asks for. */
export interface CheckRequest {
  /** Only messages received after this one (an unknown id is ignored). */
  sinceId?: string;
  /** Only messages received before this one (the next page; an unknown id is invalid_request). */
  beforeId?: string;
  /** Most messages answered. */
  limit: number;
  /** Only messages matching these (case-insensitive substrings, ANDed), filtered by the store. */
  filter?: MessageFilter;
}

/** One check answer: newest first, and whether older messages were left out. */
export interface CheckPage {
  messages: MessageView[];
  hasMore: boolean;
  /** Only when read after a wait's cursor (`afterId`): false when that message is gone and nothing was read. */
  afterFound?: boolean;
}

/** Bytes a message takes in the answer as the transport serialises it. */
export type MessageSize = (message: MessageView) => number;

/**
 * Reads one bounded check answer: at most `limit` messages, bodies cut to CHECK_FIELD_BYTES,
 * and no more than `budgetBytes` of serialised answer (CHECK_BUDGET_BYTES unless a held answer
 * asks for less; `sizeOf` measures each message as it is added; the first one always goes in).
 * The store is read in batches of CHECK_READ_BATCH, yielding to the event loop between them, so messages past the budget are
 * never read and no single read holds the loop for long. `afterId` (a held wait's cursor,
 * MailWait) leaves out the messages up to that one, which must still be in the inbox.
 */
export async function readCheckPage(
  store: MailStore,
  inboxId: string,
  request: CheckRequest,
  sizeOf: MessageSize,
  options: { afterId?: string; budgetBytes?: number } = {},
): Promise<CheckPage> {
  const { afterId, budgetBytes = CHECK_BUDGET_BYTES } = options;
  const messages: MessageView[] = [];
  let used = CHECK_ENVELOPE_BYTES;
  let cursor = request.beforeId;
  for (;;) {
    // One more than still wanted: it tells whether older messages exist beyond the limit.
    const want = Math.min(CHECK_READ_BATCH, request.limit - messages.length + 1);
    const page = await store.listMessagePage(inboxId, {
      sinceId: request.sinceId,
      beforeId: cursor,
      afterId,
      limit: want,
      maxFieldBytes: CHECK_FIELD_BYTES,
      filter: request.filter,
    });
    // The cursor was deleted meanwhile: what the caller asked for is unknown.
    if (page.afterFound === false) return messages.length === 0 ? { messages, hasMore: false, afterFound: false } : { messages, hasMore: true };
    if (!page.beforeFound) {
      if (messages.length === 0) throw new AppError('invalid_request', 'before is not a message of this inbox.');
      // The last message read was deleted meanwhile: what lies beyond it is unknown.
      return { messages, hasMore: true };
    }
    for (const message of page.messages) {
      if (messages.length >= request.limit) return { messages, hasMore: true };
      // +1: the comma between messages.
      const size = sizeOf(message) + 1;
      if (messages.length > 0 && used + size > budgetBytes) return { messages, hasMore: true };
      messages.push(message);
      used += size;
    }
    const last = page.messages.at(-1);
    if (page.messages.length < want || last === undefined) return { messages, hasMore: false };
    cursor = last.id;
    // Let other requests and SMTP sessions run between batches (SQLite reads on this thread).
    await setImmediate();
  }
}

/** A listed message as the transport writes it, with its size in bytes. */
export interface ListedFragment {
  text: string;
  bytes: number;
}

/**
 * The transport's serialised listed messages, built once per message and reused: a stored
 * message never changes (docs/architecture.md "Serialise once").
 */
export interface FragmentSource {
  /** The fragment of a message built earlier, if it is still kept. */
  cached(messageId: string): ListedFragment | undefined;
  /** Builds (and may keep) the fragment of a message read from the store. */
  build(message: MessageView): ListedFragment;
}

/** One check answer as fragments, newest first, and whether older messages were left out. */
export interface CheckListing {
  fragments: ListedFragment[];
  hasMore: boolean;
}

/**
 * readCheckPage's answer built from fragments: the page's ids come from the index in one read,
 * and only the messages without a fragment yet are read, CHECK_READ_BATCH at a time with a
 * turn of the event loop between reads. Same bounds: `limit`, CHECK_FIELD_BYTES per body,
 * CHECK_BUDGET_BYTES per answer (the first message always goes in).
 */
export async function readCheckListing(
  store: MailStore,
  inboxId: string,
  request: CheckRequest,
  source: FragmentSource,
  /** The page's ids when already read with the inbox (MailStore.pollInbox: `request.limit` + 1 after `sinceId`, no before, no filter). */
  readIds?: readonly string[],
): Promise<CheckListing> {
  // One more than wanted: it tells whether older messages exist beyond the limit.
  const { ids, beforeFound } =
    readIds !== undefined && request.beforeId === undefined && !hasFilter(request.filter)
      ? { ids: readIds, beforeFound: true }
      : await store.listMessageIds(inboxId, {
          sinceId: request.sinceId,
          beforeId: request.beforeId,
          limit: request.limit + 1,
          filter: request.filter,
        });
  if (!beforeFound) throw new AppError('invalid_request', 'before is not a message of this inbox.');
  const fragments: ListedFragment[] = [];
  const read = new Map<string, ListedFragment>();
  let reads = 0;
  let used = CHECK_ENVELOPE_BYTES;
  for (const [index, id] of ids.entries()) {
    if (fragments.length >= request.limit) return { fragments, hasMore: true };
    let fragment = source.cached(id) ?? read.get(id);
    if (fragment === undefined) {
      const batch = ids.slice(index).filter((next) => source.cached(next) === undefined && !read.has(next)).slice(0, CHECK_READ_BATCH);
      // Let other requests and SMTP sessions run between body reads (SQLite reads on this thread).
      if (reads > 0) await setImmediate();
      reads += 1;
      for (const message of await store.findListedMessages(inboxId, batch, CHECK_FIELD_BYTES)) read.set(message.id, source.build(message));
      fragment = read.get(id);
      // Deleted since its id was read.
      if (fragment === undefined) continue;
    }
    // +1: the comma between messages.
    const size = fragment.bytes + 1;
    if (fragments.length > 0 && used + size > CHECK_BUDGET_BYTES) return { fragments, hasMore: true };
    fragments.push(fragment);
    used += size;
  }
  // All ids went in; when one more than the limit was found, a deletion made room for it and
  // what lies beyond it is unknown.
  return { fragments, hasMore: ids.length > request.limit };
}

