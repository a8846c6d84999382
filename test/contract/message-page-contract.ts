import { describe, expect, it } from 'vitest';
import type { PageListing, PageQuery } from '../../src/ports/mail-store.js';
import { addInbox, deliver, deliverOne, makeAttachment, type StoreGetter } from './mail-store-fixtures.js';
import { countMessages, listMessageIds, listMessagePage, listMessages } from '../helpers/store-reads.js';

/** Cut of these tests: small, so the cases are cheap, and the code path the same as 256 KiB. */
const CUT = 64;

/** The bounded page read (readPage), the mark (markInbox) and the bounded trim (trimMessages). */
export function describeMessagePageContract(store: StoreGetter): void {
  describe('message pages', () => {
    const page = async (inboxId: string, query: Partial<PageQuery>) => {
      const result = await listMessagePage(store(), inboxId, { limit: 10, maxFieldBytes: CUT, ...query });
      return { ids: result.messages.map((m) => m.id), beforeFound: result.beforeFound };
    };

    it('pages newest first with limit and before, combinable with since', async () => {
      const inbox = await addInbox(store());
      const other = await addInbox(store());
      const [m1, m2, m3, m4] = [
        await deliverOne(store(), inbox.id),
        await deliverOne(store(), inbox.id),
        await deliverOne(store(), inbox.id),
        await deliverOne(store(), inbox.id),
      ];
      const foreign = await deliverOne(store(), other.id);
      expect(await page(inbox.id, {})).toEqual({ ids: [m4, m3, m2, m1], beforeFound: true });
      expect(await page(inbox.id, { limit: 2 })).toEqual({ ids: [m4, m3], beforeFound: true });
      expect(await page(inbox.id, { beforeId: m3, limit: 1 })).toEqual({ ids: [m2], beforeFound: true });
      expect(await page(inbox.id, { beforeId: m3 })).toEqual({ ids: [m2, m1], beforeFound: true });
      expect(await page(inbox.id, { beforeId: m1 })).toEqual({ ids: [], beforeFound: true });
      expect(await page(inbox.id, { sinceId: m1, beforeId: m4 })).toEqual({ ids: [m3, m2], beforeFound: true });
      expect(await page(inbox.id, { sinceId: 'unknown-id', beforeId: m2 })).toEqual({ ids: [m1], beforeFound: true });
      expect(await page(inbox.id, { limit: 0 })).toEqual({ ids: [], beforeFound: true });
      // Another inbox's message, or a deleted one, is no anchor for this inbox.
      expect(await page(inbox.id, { beforeId: foreign })).toEqual({ ids: [], beforeFound: false });
      await store().deleteMessage(m2);
      expect(await page(inbox.id, { beforeId: m2 })).toEqual({ ids: [], beforeFound: false });
      expect(await page(inbox.id, { beforeId: m3 })).toEqual({ ids: [m1], beforeFound: true });
    });

    it('cuts body and html at the byte bound on whole characters, and says so', async () => {
      const inbox = await addInbox(store());
      const fits = 'é'.repeat(CUT / 2);
      const long = `a${'😀'.repeat(CUT)}`;
      const small = await deliverOne(store(), inbox.id, { text: fits, html: null });
      const longText = await deliverOne(store(), inbox.id, { text: long, html: '<p>x</p>' });
      const longHtml = await deliverOne(store(), inbox.id, { text: 'short', html: `<p>${'€'.repeat(CUT)}</p>` });
      const attached = await deliverOne(store(), inbox.id, { text: 'x'.repeat(CUT + 1), attachments: [makeAttachment(new Uint8Array([1]), 'a.bin')] });
      const { messages } = await listMessagePage(store(), inbox.id, { limit: 10, maxFieldBytes: CUT });
      const byId = new Map(messages.map((m) => [m.id, m]));

      expect(byId.get(small)).toMatchObject({ text: fits, html: null, truncated: false });
      // 'a' + 15 four-byte characters = 61 bytes; a 16th would pass 64.
      expect(byId.get(longText)).toMatchObject({ text: `a${'😀'.repeat(15)}`, html: '<p>x</p>', truncated: true });
      // '<p>' + 20 three-byte characters = 63 bytes.
      expect(byId.get(longHtml)).toMatchObject({ text: 'short', html: `<p>${'€'.repeat(20)}`, truncated: true });
      expect(byId.get(attached)).toMatchObject({ text: 'x'.repeat(CUT), truncated: true, attachments: [{ filename: 'a.bin', size: 1 }] });
      for (const message of messages) {
        expect(Buffer.byteLength(message.text)).toBeLessThanOrEqual(CUT);
        expect(Buffer.byteLength(message.html ?? '')).toBeLessThanOrEqual(CUT);
      }
      // The detail and the unbounded listing keep the whole text.
      expect((await store().findMessage(longText))?.text).toBe(long);
      expect((await store().findMessage(longText))?.truncated).toBe(false);
    });

    it('marks an inbox: count, a version that moves on every change and never comes back, and nothing since the newest', async () => {
      const inbox = await addInbox(store());
      const other = await addInbox(store());
      const empty = await store().markInbox(inbox.id);
      expect(empty).toMatchObject({ count: 0, nothingSince: false });
      const versions = [empty.version];
      const m1 = await deliverOne(store(), inbox.id);
      const m2 = await deliverOne(store(), inbox.id);
      const foreign = await deliverOne(store(), other.id);
      const two = await store().markInbox(inbox.id, m2);
      expect(two).toMatchObject({ count: 2, nothingSince: true });
      versions.push(two.version);
      // Another inbox's delivery does not move this inbox's version.
      expect((await store().markInbox(inbox.id)).version).toBe(two.version);
      expect((await store().markInbox(inbox.id, m1)).nothingSince).toBe(false);
      expect((await store().markInbox(inbox.id, foreign)).nothingSince).toBe(false);
      expect((await store().markInbox(inbox.id, 'unknown-id')).nothingSince).toBe(false);
      // Delete the newest, then receive one: the count is back at 2, the version is not.
      await store().deleteMessage(m2);
      const afterDelete = await store().markInbox(inbox.id, m1);
      expect(afterDelete).toMatchObject({ count: 1, nothingSince: true });
      versions.push(afterDelete.version);
      const m3 = await deliverOne(store(), inbox.id);
      versions.push((await store().markInbox(inbox.id)).version);
      // Delete an older one and receive another: same count as before, another version.
      await store().deleteMessage(m1);
      versions.push((await store().markInbox(inbox.id)).version);
      await deliverOne(store(), inbox.id);
      const last = await store().markInbox(inbox.id, m3);
      expect(last).toMatchObject({ count: 2, nothingSince: false });
      versions.push(last.version);
      expect(new Set(versions).size).toBe(versions.length);
    });

    it('lists the ids of a page as its messages, and reads the messages of ids read already', async () => {
      const inbox = await addInbox(store());
      const other = await addInbox(store());
      const ids: string[] = [];
      for (let i = 0; i < 7; i += 1) {
        const attachments = i === 2 ? [makeAttachment(new Uint8Array([1, 2]), 'a.bin'), makeAttachment(new Uint8Array([3]), 'b.bin')] : [];
        ids.push(await deliverOne(store(), inbox.id, { subject: i % 2 === 0 ? `code ${i}` : `news ${i}`, text: 'é'.repeat(CUT), attachments }));
      }
      const foreign = await deliverOne(store(), other.id);
      const queries = [
        { limit: 10 },
        { limit: 3 },
        { limit: 10, sinceId: ids[2] },
        { limit: 2, beforeId: ids[5] },
        { limit: 10, filter: { subject: 'code' } },
        { limit: 10, beforeId: foreign },
        { limit: 10, sinceId: 'unknown-id' },
      ];
      for (const query of queries) {
        const expected = await page(inbox.id, query);
        expect(await listMessageIds(store(), inbox.id, query)).toEqual({ ids: expected.ids, beforeFound: expected.beforeFound });
      }
      const { messages } = await listMessagePage(store(), inbox.id, { limit: 10, maxFieldBytes: CUT });
      // More ids than one statement reads, one of another inbox and one unknown: those are left out.
      const found = await listMessagePage(store(), inbox.id, { limit: 20, maxFieldBytes: CUT, ids: [...ids].reverse().concat(foreign, 'unknown-id') });
      expect(found.messages).toEqual(messages);
      expect(messages.find((message) => message.id === ids[2])?.attachments.map((a) => a.filename)).toEqual(['a.bin', 'b.bin']);
      expect(await listMessagePage(store(), inbox.id, { limit: 10, maxFieldBytes: CUT, ids: [] })).toEqual({ messages: [], beforeFound: true });
    });

    it('tells whether messages lie beyond the page, within a byte budget, reading no body the caller holds', async () => {
      const inbox = await addInbox(store());
      const ids: string[] = [];
      for (let i = 0; i < 6; i += 1) ids.push(await deliverOne(store(), inbox.id, { subject: `m${i}` }));
      const newestFirst = [...ids].reverse();
      const read = async (query: Partial<PageQuery>, listing: PageListing<string> = byId) => {
        const result = await store().readPage(inbox.id, { limit: 10, maxFieldBytes: CUT, ...query }, listing);
        return { ids: result.messages, hasMore: result.hasMore };
      };
      const taken: string[] = [];
      const byId: PageListing<string> = { held: () => undefined, take: (message) => (taken.push(message.id), message.id), bytes: () => 10 };
      expect(await read({})).toEqual({ ids: newestFirst, hasMore: false });
      expect(await read({ limit: 6 })).toEqual({ ids: newestFirst, hasMore: false });
      expect(await read({ limit: 5 })).toEqual({ ids: newestFirst.slice(0, 5), hasMore: true });
      expect(await read({ limit: 2, oldestFirst: true })).toEqual({ ids: ids.slice(0, 2), hasMore: true });
      expect(await read({ limit: 10, oldestFirst: true, sinceId: ids[3] })).toEqual({ ids: ids.slice(4), hasMore: false });
      // 10 bytes each: 35 bytes hold three; the first goes in whatever its size.
      expect(await read({ maxBytes: 35 })).toEqual({ ids: newestFirst.slice(0, 3), hasMore: true });
      expect(await read({ maxBytes: 1 })).toEqual({ ids: newestFirst.slice(0, 1), hasMore: true });
      // No body past the budget is read: at most one batch beyond what went in.
      taken.length = 0;
      await read({ maxBytes: 1 });
      expect(taken.length).toBeLessThan(ids.length);
      // What the caller holds is taken from it, and its body is not read.
      taken.length = 0;
      const held = new Set(newestFirst.slice(0, 4));
      const holding: PageListing<string> = { held: (id) => (held.has(id) ? `held ${id}` : undefined), take: byId.take, bytes: () => 10 };
      expect((await read({}, holding)).ids).toEqual([...newestFirst.slice(0, 4).map((id) => `held ${id}`), ...newestFirst.slice(4)]);
      expect(taken.sort()).toEqual(newestFirst.slice(4).sort());
    });

    it('trims an inbox to its newest messages, boundedly, and frees unshared contents', async () => {
      const inbox = await addInbox(store());
      const other = await addInbox(store());
      const ids: string[] = [];
      for (let i = 0; i < 6; i += 1) ids.push(await deliverOne(store(), inbox.id, { subject: `m${i}` }));
      const shared = await deliver(store(), [inbox.id, other.id], { subject: 'shared', raw: new Uint8Array([1]), receivedAt: new Date() });
      expect(await store().trimMessages(inbox.id, 7, 100)).toBe(0);
      expect(await store().trimMessages(inbox.id, 3, 2)).toBe(2);
      expect(await countMessages(store(), inbox.id)).toBe(5);
      expect(await store().trimMessages(inbox.id, 3, 100)).toBe(2);
      const kept = await listMessages(store(), inbox.id);
      expect(kept.map((m) => m.subject)).toEqual(['shared', 'm5', 'm4']);
      expect(await store().findMessage(ids[0] ?? '')).toBeNull();
      // The other inbox's copy of a trimmed content would survive; here the shared one is kept anyway.
      expect(await store().findMessage(shared.get(other.id) ?? '')).not.toBeNull();
      expect(await store().trimMessages(inbox.id, 0, 100)).toBe(3);
      expect(await countMessages(store(), inbox.id)).toBe(0);
      expect(await store().findMessage(shared.get(other.id) ?? '')).not.toBeNull();
    });
  });
}
