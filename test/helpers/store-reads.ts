import type { MessageView } from '../../src/domain/types.js';
import type { InboxStore, InboxUsage } from '../../src/ports/inbox-store.js';
import { IDS, VIEWS, type MessageReads, type PageQuery } from '../../src/ports/message-reads.js';

/**
 * Reads only tests make, over the store's ports: production reads an inbox through the one
 * page read (MessageReads.readPage) and its mark, and the usage with the inbox
 * (InboxStore.findInboxWithUsage).
 */

/** More messages than any test stores in one inbox: "all of them". */
const ALL_MESSAGES = 100_000;
/** A cut no test body reaches (the largest both databases take), so bodies come back whole. */
const WHOLE_BODY_BYTES = 2 ** 31 - 1;

/** Every message of an inbox (after `sinceId`, at most `limit`), newest first, bodies whole. */
export async function listMessages(store: Pick<MessageReads, 'readPage'>, inboxId: string, options: { sinceId?: string; limit?: number } = {}): Promise<MessageView[]> {
  const { sinceId, limit = ALL_MESSAGES } = options;
  return (await store.readPage(inboxId, { sinceId, limit, maxFieldBytes: WHOLE_BODY_BYTES }, VIEWS)).messages;
}

/** Messages an inbox holds now (its mark's count). */
export async function countMessages(store: Pick<MessageReads, 'markInbox'>, inboxId: string): Promise<number> {
  return (await store.markInbox(inboxId)).count;
}

/** The stored usage of an inbox (none for an absent one), as the RCPT TO check reads it. */
export async function inboxUsage(store: Pick<InboxStore, 'findInboxById' | 'findInboxWithUsage'>, inboxId: string): Promise<InboxUsage> {
  const inbox = await store.findInboxById(inboxId);
  const found = inbox === null ? null : await store.findInboxWithUsage(inbox.username);
  return found?.inbox.id === inboxId ? found.usage : { messages: 0, bytes: 0 };
}

/** readPage of the messages as read, without `hasMore`: the page and whether its anchors were found. */
export async function listMessagePage(store: Pick<MessageReads, 'readPage'>, inboxId: string, query: PageQuery) {
  const { hasMore: _, ...page } = await store.readPage(inboxId, query, VIEWS);
  return page;
}

/** The ids of the page readPage reads, without reading a body. */
export async function listMessageIds(store: Pick<MessageReads, 'readPage'>, inboxId: string, query: Omit<PageQuery, 'maxFieldBytes'>) {
  const { messages: ids, hasMore: _, ...found } = await store.readPage(inboxId, { ...query, maxFieldBytes: 0 }, IDS);
  return { ids, ...found };
}
