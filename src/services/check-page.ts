import { CHECK_BUDGET_BYTES, CHECK_ENVELOPE_BYTES, CHECK_FIELD_BYTES } from '../domain/check-limits.js';
import { AppError } from '../domain/errors.js';
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

/** One check answer in the transport's items (PageListing): newest first, and whether older messages were left out. */
export interface CheckPage<T> {
  messages: T[];
  hasMore: boolean;
  /** Only when read after a wait's cursor (`afterId`): false when that message is gone and nothing was read. */
  afterFound?: boolean;
}

/** A listed message as the transport writes it, with its size in bytes. */
export interface ListedFragment {
  text: string;
  bytes: number;
}

/**
 * The one read of a check answer, for a plain check and for every read of a held one: at
 * most `limit` messages, bodies cut to CHECK_FIELD_BYTES, no more than `budgetBytes` of
 * serialised answer (CHECK_BUDGET_BYTES unless a held answer asks for less; the first message
 * always goes in), in the transport's items (`listing`: each message serialised once and kept
 * by id, docs/architecture.md "Serialise once"). One readPage: the ids from the index, then
 * only the bodies the listing has not kept, a few at a time. `afterId` (a held wait's cursor,
 * MailWait) leaves out the messages up to that one, which must still be in the inbox; `ids`:
 * the page's ids read with the inbox (InboxPoll.ids), used for a first page only.
 */
export async function readCheck<T>(
  store: Pick<MessageReads, 'readPage'>,
  inboxId: string,
  request: CheckRequest,
  listing: PageListing<T>,
  options: { afterId?: string; budgetBytes?: number; ids?: readonly string[] } = {},
): Promise<CheckPage<T>> {
  const { afterId, budgetBytes = CHECK_BUDGET_BYTES } = options;
  const firstPage = request.beforeId === undefined && afterId === undefined && !hasFilter(request.filter);
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
      ids: firstPage ? options.ids : undefined,
    },
    listing,
  );
  if (!page.beforeFound) throw new AppError('invalid_request', 'before is not a message of this inbox.');
  const { messages, hasMore, afterFound } = page;
  return afterFound === undefined ? { messages, hasMore } : { messages, hasMore, afterFound };
}
