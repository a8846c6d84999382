import { describe, expect, it } from 'vitest';
import { serviceFixture, waitForMail } from '../../test/helpers/service-fixture.js';
import type { InboxEventListener, InboxEvents } from '../ports/inbox-events.js';
import type { MessageFilter, PageQuery } from '../ports/mail-store.js';
import type { CheckPage } from './check-page.js';
import type { MessageView } from '../domain/types.js';
import { HeldRequests } from './held-requests.js';
import { LiveMailService } from './live-mail-service.js';

/** The smallest InboxEvents: listeners per inbox, called at once. */
function memoryEvents(): InboxEvents {
  const listeners = new Map<string, Set<InboxEventListener>>();
  return {
    publish: (event) => {
      if (event.type !== 'resync' && event.inboxId !== undefined) for (const listener of listeners.get(event.inboxId) ?? []) listener(event);
    },
    subscribe: (inboxId, listener) => {
      const set = listeners.get(inboxId) ?? new Set();
      listeners.set(inboxId, set.add(listener));
      return () => set.delete(listener);
    },
    start: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
}

/** Waits (bounded) until `predicate` holds. */
async function until(predicate: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !predicate(); i += 1) await new Promise((resolve) => setTimeout(resolve, 5));
  expect(predicate()).toBe(true);
}

/**
 * A live service over the memory store whose filtered page reads (readPage) are recorded, with an
 * inbox and a way to deliver to it (with or without telling the waits).
 */
async function recordedInbox() {
  const f = serviceFixture({ plan: { freeMaxMessages: 1000 } });
  const events = memoryEvents();
  const pages: PageQuery[] = [];
  // The filtered reads, of ids alone or of messages.
  const readPage: typeof f.store.readPage = (inboxId, query, listing) => {
    if (query.filter !== undefined) pages.push(query);
    return f.store.readPage(inboxId, query, listing);
  };
  const store = Object.assign(Object.create(f.store) as typeof f.store, { readPage });
  const heldRequests = new HeldRequests();
  // Its first read is the plain check's: that goes through the recorded store too.
  const inboxes = f.inboxesOver(store);
  const live = new LiveMailService({ store, clock: f.clock, inboxes, events, held: heldRequests });
  const { session } = await f.newSession();
  const { inbox } = await f.inboxes.create(session, {}, '127.0.0.1');
  const address = `${inbox.username}@tempinbox.test`;
  const deliver = async (subject: string, announce = true) => {
    const id = await f.send(address, subject);
    if (announce) events.publish({ type: 'message', inboxId: inbox.id });
    return id;
  };
  /** A wait with this filter, once it is held (its answer wrapped: an async function would wait for it). */
  const held = async (filter: MessageFilter, sinceId?: string): Promise<{ answer: Promise<CheckPage<MessageView>> }> => {
    const heldBefore = heldRequests.size;
    const answer = waitForMail(live, inboxes, session, inbox.username, { sinceId, limit: 10, filter }, 30, (m) => JSON.stringify(m).length, '127.0.0.1');
    await until(() => heldRequests.size > heldBefore);
    return { answer };
  };
  return { deliver, held, pages, store: f.store };
}

describe('MailWait: a filtered wait reads each message once', () => {
  it('reads the whole inbox once, then on each wake-up only what came after what it has looked at', async () => {
    const inbox = await recordedInbox();
    let newest = '';
    for (let i = 0; i < 40; i += 1) newest = await inbox.deliver(`noise ${i}`, false);
    const { answer } = await inbox.held({ subject: 'code' });
    expect(inbox.pages).toHaveLength(1);
    expect(inbox.pages[0]?.afterId).toBeUndefined();
    for (let i = 0; i < 3; i += 1) {
      const before = newest;
      newest = await inbox.deliver(`more noise ${i}`);
      await until(() => inbox.pages.length === 2 + i);
      // After the newest message there was when it last read: only the one that woke it is new.
      expect(inbox.pages.at(-1)?.afterId).toBe(before);
    }
    await inbox.deliver('your code');
    const page = await answer;
    expect(page.messages.map((m) => m.subject)).toEqual(['your code']);
    expect(page.hasMore).toBe(false);
  });

  it('reads from since again when the message it had looked up to is deleted, and answers nothing older than since', async () => {
    const inbox = await recordedInbox();
    await inbox.deliver('old code', false);
    const since = await inbox.deliver('seen', false);
    await inbox.deliver('noise 1', false);
    const { answer } = await inbox.held({ subject: 'code' }, since);
    // A wake-up that matches nothing: the wait now looks only after `noise 2`.
    const cursor = await inbox.deliver('noise 2');
    await until(() => inbox.pages.some((query) => query.afterId !== undefined));
    expect(await inbox.store.deleteMessage(cursor)).toBe(true);
    const reads = inbox.pages.length;
    await inbox.deliver('new code');
    const page = await answer;
    expect(page.messages.map((m) => m.subject)).toEqual(['new code']);
    // The read after the gone cursor found it gone, and the next one read from `since`.
    expect(inbox.pages.slice(reads).map((query) => [query.afterId, query.sinceId])).toEqual([
      [cursor, since],
      [undefined, since],
    ]);
  });
});
