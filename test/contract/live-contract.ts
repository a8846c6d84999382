import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/domain/clock.js';
import type { InboxEvent, InboxEvents } from '../../src/ports/inbox-events.js';
import type { MailStore } from '../../src/ports/mail-store.js';
import { DeliveryService } from '../../src/services/delivery-service.js';
import { DEFAULT_PLAN, lineParser } from '../helpers/service-fixture.js';
import { addInbox, at, makeMail, openPolicy, storedIds, type StoreGetter } from './mail-store-fixtures.js';
import { listMessagePage, listMessages } from '../helpers/store-reads.js';

/**
 * Two ends of the event path: `listener` where waiters and streams subscribe, `publisher`
 * what the writer publishes through (the same bus on one node; on PostgreSQL two nodes).
 */
export interface EventPair {
  listener: InboxEvents;
  publisher: InboxEvents;
  close(): Promise<void>;
}

/** Makes the event path of the backend under test, around its store. */
export type EventPairFactory = (store: MailStore) => Promise<EventPair>;

const PAGE = { maxFieldBytes: 1024 };

/** Waits (bounded) until `predicate` holds. */
async function until(predicate: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Live mail: recipient per copy, filters in the store query, reading forward, and the event path after commit. */
export function describeLiveContract(store: StoreGetter, makeEvents: EventPairFactory): void {
  describe('live mail', () => {
    it('keeps the envelope recipient of each copy, and the inbox address when none was given', async () => {
      const a = await addInbox(store());
      const b = await addInbox(store());
      const c = await addInbox(store());
      const recipients = new Map([
        [a.id, `${a.username}+signup-17@tempinbox.test`],
        [b.id, `${b.username}@tempinbox.test`],
      ]);
      const ids = storedIds(await store().insertMessage({ ...makeMail(), recipients }, [a.id, b.id, c.id], openPolicy()));
      expect((await store().findMessage(ids.get(a.id) ?? ''))?.recipient).toBe(`${a.username}+signup-17@tempinbox.test`);
      const [viewB] = (await listMessagePage(store(), b.id, { limit: 10, ...PAGE })).messages;
      expect(viewB?.recipient).toBe(`${b.username}@tempinbox.test`);
      const [viewC] = await listMessages(store(), c.id);
      expect(viewC?.recipient).toBe(`${c.username}@${c.domain}`);
    });

    it('filters by recipient, sender and subject: case-insensitive substrings, ANDed, in the query', async () => {
      const inbox = await addInbox(store());
      const send = async (tag: string, overrides: Parameters<typeof makeMail>[0]) => {
        const recipients = new Map([[inbox.id, `${inbox.username}+${tag}@tempinbox.test`]]);
        const ids = storedIds(await store().insertMessage({ ...makeMail(overrides), recipients }, [inbox.id], openPolicy()));
        return ids.get(inbox.id) ?? '';
      };
      const signup = await send('signup', { subject: 'Your CODE is 123', from: 'Shop <no-reply@shop.example>' });
      const other = await send('other', { subject: 'Your code is 456', from: '', envelopeFrom: 'bounce@bank.example' });
      const literal = await send('100%_off', { subject: 'a_b 50%', from: 'x@y.example' });
      // Newer than the match: the limit must count matches, not rows.
      for (let i = 0; i < 3; i += 1) await send('noise', { subject: `noise ${i}` });
      const list = async (filter: Record<string, string>, limit = 10) =>
        (await listMessagePage(store(), inbox.id, { limit, filter, ...PAGE })).messages.map((m) => m.id);

      expect(await list({ to: '+SIGNUP@' })).toEqual([signup]);
      expect(await list({ to: '+signup@' }, 1)).toEqual([signup]);
      expect(await list({ subject: 'code' })).toEqual([other, signup]);
      expect(await list({ subject: 'code', to: 'other' })).toEqual([other]);
      expect(await list({ from: 'BANK.example' })).toEqual([other]);
      expect(await list({ from: 'no-reply@shop' })).toEqual([signup]);
      expect(await list({ from: 'shop', subject: '456' })).toEqual([]);
      // LIKE's own characters are literal.
      expect(await list({ to: '100%_' })).toEqual([literal]);
      expect(await list({ subject: 'a_b 50%' })).toEqual([literal]);
      expect(await list({ subject: '%' })).toEqual([literal]);
      expect(await list({ subject: '_' })).toEqual([literal]);
      // Filters combine with since.
      expect((await listMessagePage(store(), inbox.id, { sinceId: signup, limit: 10, filter: { subject: 'code' }, ...PAGE })).messages.map((m) => m.id)).toEqual([other]);
    });

    it('reads forward: after an id, exactly the later messages, oldest first, page by page', async () => {
      const inbox = await addInbox(store());
      const ids: string[] = [];
      for (let i = 0; i < 7; i += 1) ids.push(storedIds(await store().insertMessage(makeMail({ subject: `m${i}` }), [inbox.id], openPolicy())).get(inbox.id) ?? '');
      const forward = async (sinceId: string | undefined, limit: number) =>
        (await listMessagePage(store(), inbox.id, { sinceId, limit, oldestFirst: true, ...PAGE })).messages.map((m) => m.id);
      expect(await forward(ids[2], 100)).toEqual(ids.slice(3));
      expect(await forward(ids[2], 2)).toEqual(ids.slice(3, 5));
      expect(await forward(ids[6], 100)).toEqual([]);
      expect(await forward(undefined, 3)).toEqual(ids.slice(0, 3));
    });

    it('wakes a subscriber only after the message is committed: what it reads on the event holds the message', async () => {
      const events = await makeEvents(store());
      try {
        const inbox = await addInbox(store(), { expiresAt: at(60) });
        const delivery = new DeliveryService({
          store: store(),
          clock: new FakeClock(at(1)),
          parse: lineParser,
          domains: ['tempinbox.test'],
          plan: DEFAULT_PLAN,
          events: events.publisher,
        });
        const seen: string[][] = [];
        const reads: Promise<void>[] = [];
        const received: InboxEvent[] = [];
        const unsubscribe = events.listener.subscribe(inbox.id, (event) => {
          received.push(event);
          // Read at once, as a waiter does: a wake-up before the commit would read nothing new.
          reads.push(listMessages(store(), inbox.id).then((messages) => void seen.push(messages.map((m) => m.id))));
        });
        const other = await addInbox(store(), { expiresAt: at(60) });
        const delivered: string[] = [];
        for (let i = 0; i < 5; i += 1) {
          const result = await delivery.deliver('a@example.org', [{ address: `${inbox.username}+t${i}@tempinbox.test`, inboxId: inbox.id }, { address: `${other.username}@tempinbox.test`, inboxId: other.id }], new TextEncoder().encode(`s${i}\nbody`));
          delivered.push(result.messageIds[0] ?? '');
          const count = delivered.length;
          await until(() => seen.some((ids) => ids.length >= count));
        }
        await Promise.all(reads);
        // Each message woke the subscriber with it already visible.
        for (let i = 0; i < delivered.length; i += 1) expect(seen.some((ids) => ids.includes(delivered[i] ?? '') && ids.length === i + 1)).toBe(true);
        expect(received.every((event) => event.type === 'message' || event.type === 'resync')).toBe(true);
        expect(received.some((event) => event.type === 'message' && event.inboxId === inbox.id)).toBe(true);
        unsubscribe();
      } finally {
        await events.close();
      }
    });

    it('tells the subscribers of a deleted message, and nobody else', async () => {
      const events = await makeEvents(store());
      try {
        const inbox = await addInbox(store());
        const other = await addInbox(store());
        const id = storedIds(await store().insertMessage(makeMail(), [inbox.id], openPolicy())).get(inbox.id) ?? '';
        const got: InboxEvent[] = [];
        const gotOther: InboxEvent[] = [];
        const off = events.listener.subscribe(inbox.id, (event) => got.push(event));
        const offOther = events.listener.subscribe(other.id, (event) => gotOther.push(event));
        expect(await store().deleteMessage(id)).toBe(true);
        events.publisher.publish({ type: 'deleted', inboxId: inbox.id, messageId: id });
        await until(() => got.some((event) => event.type === 'deleted'));
        expect(got.find((event) => event.type === 'deleted')).toEqual({ type: 'deleted', inboxId: inbox.id, messageId: id });
        expect(gotOther.filter((event) => event.type !== 'resync')).toEqual([]);
        off();
        offOther();
      } finally {
        await events.close();
      }
    });
  });
}
