import { CHECK_BUDGET_BYTES, CHECK_ENVELOPE_BYTES, CHECK_FIELD_BYTES } from '../domain/check-limits.js';
import { AppError } from '../domain/errors.js';
import type { MessageView } from '../domain/types.js';
import { hasFilter, type MessageFilter, type MessageReads, type PageListing } from '../ports/message-reads.js';

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
 * One bounded check answer in the caller's items (`listing`: the transport's serialised
 * messages, kept by id so that each message is serialised once): at most `limit` messages,
 * bodies cut to CHECK_FIELD_BYTES, no more than `budgetBytes` of serialised answer
 * (CHECK_BUDGET_BYTES unless a held answer asks for less; the first message always goes in).
 * One readPage: the ids from the index, then only the bodies the listing has not kept, a few
 * at a time. `afterId` (a held wait's cursor, MailWait) leaves out the messages up to that one,
 * which must still be in the inbox; `ids`: the page's ids read already (InboxPoll.ids).
 */
export async function readCheck<T>(
  store: Pick<MessageReads, 'readPage'>,
  inboxId: string,
  request: CheckRequest,
  listing: PageListing<T>,
  options: { afterId?: string; budgetBytes?: number; ids?: readonly string[] } = {},
): Promise<{ items: T[]; hasMore: boolean; afterFound?: boolean }> {
  const { afterId, budgetBytes = CHECK_BUDGET_BYTES } = options;
  // Ids read with the inbox serve the first page only.
  const ids = options.ids !== undefined && request.beforeId === undefined && afterId === undefined && !hasFilter(request.filter) ? options.ids : undefined;
  const page = await store.readPage(
    inboxId,
    {
      sinceId: request.sinceId,
      beforeId: request.beforeId,
      afterId,
      limit: request.limit,
      maxFieldBytes: CHECK_FIELD_BYTES,
      filter: request.filter,
      maxBytes: budgetBytes - CHECK_ENVELOPE_BYTES,
      ids,
    },
    listing,
  );
  if (!page.beforeFound) throw new AppError('invalid_request', 'before is not a message of this inbox.');
  const { messages: items, hasMore, afterFound } = page;
  return afterFound === undefined ? { items, hasMore } : { items, hasMore, afterFound };
}

/** readCheck with the messages as read, each measured by `sizeOf` (the transport's bytes). */
export async function readCheckPage(
  store: Pick<MessageReads, 'readPage'>,
  inboxId: string,
  request: CheckRequest,
  sizeOf: MessageSize,
  options: { afterId?: string; budgetBytes?: number } = {},
): Promise<CheckPage> {
  // +1: the comma between messages.
  const listing: PageListing<MessageView> = { held: () => undefined, take: (message) => message, bytes: (message) => sizeOf(message) + 1 };
  const { items, ...rest } = await readCheck(store, inboxId, request, listing, options);
  return { messages: items, ...rest };
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

/** readCheck over the transport's kept fragments (`source`); `readIds`: the page's ids read with the inbox (InboxPoll.ids). */
export async function readCheckListing(
  store: Pick<MessageReads, 'readPage'>,
  inboxId: string,
  request: CheckRequest,
  source: FragmentSource,
  readIds?: readonly string[],
): Promise<CheckListing> {
  // +1: the comma between messages.
  const listing: PageListing<ListedFragment> = { held: (id) => source.cached(id), take: (message) => source.build(message), bytes: (fragment) => fragment.bytes + 1 };
  const { items, hasMore } = await readCheck(store, inboxId, request, listing, { ids: readIds });
  return { fragments: items, hasMore };
}
