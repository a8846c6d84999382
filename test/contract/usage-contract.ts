import { describe, expect, it } from 'vitest';
import type { Inbox } from '../../src/domain/types.js';
import type { InboxUsage, MailStore } from '../../src/ports/mail-store.js';
import { addInbox, at, deliver, deliverOne, makeAttachment, makeInbox, makeMail, makeSession, openPolicy, storedIds, type StoreGetter } from './mail-store-fixtures.js';
import { countMessages, inboxUsage, listMessages } from '../helpers/store-reads.js';

/** `size` bytes of a raw message: the byte counter sums raw sizes, so every copy's size differs. */
function rawOfSize(size: number): Uint8Array {
  return new TextEncoder().encode('y'.repeat(size));
}

/** What an inbox holds, counted from its messages (the index and each listed message's size). */
async function recount(store: MailStore, inboxId: string): Promise<InboxUsage> {
  const messages = await listMessages(store, inboxId);
  expect(await countMessages(store, inboxId)).toBe(messages.length);
  return { messages: messages.length, bytes: messages.reduce((sum, message) => sum + message.size, 0) };
}

/**
 * The stored usage of every inbox (inboxUsage, and the RCPT read findInboxWithUsage) equals a
 * recount of its messages; an inbox that is gone reads as empty.
 */
async function expectExactUsage(store: MailStore, inboxes: readonly Inbox[], step: string): Promise<void> {
  for (const inbox of inboxes) {
    const counted = await recount(store, inbox.id);
    expect(await inboxUsage(store, inbox.id), `${step}: inboxUsage of ${inbox.username}`).toEqual(counted);
    const found = await store.findInboxWithUsage(inbox.username);
    if (found !== null && found.inbox.id === inbox.id) expect(found.usage, `${step}: findInboxWithUsage of ${inbox.username}`).toEqual(counted);
  }
}

/**
 * Writes an inbox's stored usage behind the store's back (a raw UPDATE of its row on SQL), as a
 * node of a release before the counters leaves it (docs/scaling.md "Migrations").
 */
export type OverwriteUsage = (store: MailStore, inboxId: string, usage: InboxUsage) => Promise<void>;

/** Every batch of recountUsage from the first inbox on, `limit` at a time, as the CLI runs them; with the totals. */
async function recountAll(store: MailStore, limit: number): Promise<{ batches: number[]; checked: number; corrected: number }> {
  const batches: number[] = [];
  let corrected = 0;
  let afterId: string | undefined;
  let previous = '';
  // Bounded: a store of this test holds a handful of inboxes.
  for (let round = 0; round < 100; round += 1) {
    const result = await store.recountUsage(afterId === undefined ? { limit } : { afterId, limit });
    batches.push(result.checked);
    corrected += result.corrected;
    expect(result.checked).toBeLessThanOrEqual(limit);
    expect(result.corrected).toBeLessThanOrEqual(result.checked);
    if (result.checked < limit) {
      if (result.checked === 0) expect(result.lastId).toBeUndefined();
      return { batches, checked: batches.reduce((sum, n) => sum + n, 0), corrected };
    }
    // Each batch goes on from the last: never the same inbox twice.
    expect(result.lastId).toBeDefined();
    expect(result.lastId).not.toBe(previous);
    previous = result.lastId ?? '';
    afterId = result.lastId;
  }
  throw new Error('recountUsage never returned a short batch');
}

/**
 * The usage counters each inbox keeps (docs/architecture.md "Inbox usage counters"): exact
 * after every write that adds or removes a copy, on every backend; and recountUsage, which sets
 * counters left wrong right again (`overwrite` corrupts them; without it that test is skipped).
 */
export function describeUsageContract(store: StoreGetter, overwrite?: OverwriteUsage): void {
  describe('stored inbox usage', () => {
    it('equals a recount of the messages after every kind of write', async () => {
      const session = makeSession();
      await store().insertSession(session);
      const a = await addInbox(store(), { expiresAt: at(60), sessionId: session.id });
      const b = await addInbox(store(), { expiresAt: at(60), licenseId: 'lic' });
      const c = await addInbox(store(), { expiresAt: at(60) });
      const postmaster = await addInbox(store(), { expiresAt: at(60) });
      const soon = await addInbox(store(), { expiresAt: at(10) });
      const later = await addInbox(store(), { expiresAt: at(11) });
      const all = [a, b, c, postmaster, soon, later];
      await expectExactUsage(store(), all, 'empty');

      // Multi-recipient deliveries (one content, a copy per inbox), a duplicate recipient, attachments.
      const shared = await deliver(store(), [a.id, b.id, c.id, a.id], { raw: rawOfSize(301), attachments: [makeAttachment(new Uint8Array(50))] });
      await deliver(store(), [a.id, soon.id], { raw: rawOfSize(402) });
      await deliver(store(), [soon.id, later.id, c.id], { raw: rawOfSize(503) });
      for (let i = 0; i < 6; i += 1) await deliverOne(store(), postmaster.id, { raw: rawOfSize(100 + i) });
      const own = await deliverOne(store(), b.id, { raw: rawOfSize(604) });
      // A group of deliveries at once (one transaction on SQLite's group commit).
      await Promise.all([7, 8, 9].map((n) => deliver(store(), [b.id, later.id], { raw: rawOfSize(n * 10) })));
      await expectExactUsage(store(), all, 'deliveries');
      expect(await inboxUsage(store(), a.id)).toEqual({ messages: 2, bytes: 301 + 402 });

      // Refused at store time (full, expired, missing): nothing counted.
      const refusing = openPolicy(at(10), { free: { maxMessages: 2, maxBytes: 1024 ** 3 } });
      const refused = await store().insertMessage(makeMail({ raw: rawOfSize(999) }), [a.id, soon.id, 'missing'], refusing);
      expect([...refused.values()].map((outcome) => outcome.status)).toEqual(['full', 'expired', 'missing']);
      await expectExactUsage(store(), all, 'refusals');

      // Single deletions: a copy of a shared content, an own message, one already gone.
      expect(await store().deleteMessage(shared.get(b.id) ?? '')).toBe(true);
      expect(await store().deleteMessage(own)).toBe(true);
      expect(await store().deleteMessage(own)).toBe(false);
      await expectExactUsage(store(), all, 'deleteMessage');

      // The postmaster trim, bounded and then whole.
      expect(await store().trimMessages(postmaster.id, 3, 2)).toBe(2);
      await expectExactUsage(store(), all, 'trim');
      expect(await store().trimMessages(postmaster.id, 3, 100)).toBe(1);
      expect(await inboxUsage(store(), postmaster.id)).toEqual({ messages: 3, bytes: 103 + 104 + 105 });

      // Deleting an inbox: its counters go with it, the others' copies of its contents stay counted.
      expect(await store().deleteInbox(c.id)).toBe(true);
      await expectExactUsage(store(), all, 'deleteInbox');
      expect(await inboxUsage(store(), c.id)).toEqual({ messages: 0, bytes: 0 });

      // The sweeper, one inbox per batch; then an expired name taken over starts empty.
      expect((await store().deleteExpired(at(10), 1)).inboxes).toBe(1);
      await expectExactUsage(store(), all, 'first sweep');
      const successor = makeInbox({ username: later.username, expiresAt: at(90) });
      expect(await store().insertInbox(successor, at(12))).toBe('created');
      await expectExactUsage(store(), [...all, successor], 'takeover');
      expect(await store().findInboxWithUsage(later.username)).toEqual({ inbox: successor, usage: { messages: 0, bytes: 0 } });
      await deliverOne(store(), successor.id, { raw: rawOfSize(77) });
      expect((await store().deleteExpired(at(20), 100)).inboxes).toBe(0);
      await expectExactUsage(store(), [...all, successor], 'after sweeps');
      expect(await inboxUsage(store(), successor.id)).toEqual({ messages: 1, bytes: 77 });

      // The session listing shows the same count.
      const listed = await store().listActiveInboxes({ sessionId: session.id, licenseId: null }, at(1));
      expect(listed.map((inbox) => [inbox.id, inbox.messageCount])).toEqual([[a.id, (await recount(store(), a.id)).messages]]);
    });

    it('stays exact under concurrent deliveries, deletions and trims of one inbox', async () => {
      const inbox = await addInbox(store(), { expiresAt: at(60) });
      const other = await addInbox(store(), { expiresAt: at(60) });
      const first: string[] = [];
      for (let i = 0; i < 20; i += 1) first.push(await deliverOne(store(), inbox.id, { raw: rawOfSize(200 + i) }));
      await Promise.all([
        ...Array.from({ length: 20 }, (_, i) => deliver(store(), [inbox.id, other.id], { raw: rawOfSize(400 + i) })),
        ...first.slice(0, 10).map((id) => store().deleteMessage(id)),
        ...Array.from({ length: 3 }, () => store().trimMessages(inbox.id, 25, 2)),
      ]);
      await expectExactUsage(store(), [inbox, other], 'concurrent writes');
      expect((await inboxUsage(store(), other.id)).messages).toBe(20);
    });

    it('recountUsage visits every inbox once in batches and finds exact counters nothing to correct', async () => {
      expect(await store().recountUsage({ limit: 10 })).toEqual({ checked: 0, corrected: 0, lastId: undefined });
      const inboxes = [];
      for (let i = 0; i < 5; i += 1) inboxes.push(await addInbox(store(), { expiresAt: at(60) }));
      await deliver(store(), inboxes.slice(0, 3).map((inbox) => inbox.id), { raw: rawOfSize(120) });
      await deliverOne(store(), inboxes[3]?.id ?? '', { raw: rawOfSize(33) });
      expect(await recountAll(store(), 2)).toEqual({ batches: [2, 2, 1], checked: 5, corrected: 0 });
      // A last full batch: the next one is empty.
      expect(await recountAll(store(), 5)).toEqual({ batches: [5, 0], checked: 5, corrected: 0 });
      expect(await store().recountUsage({ limit: 0 })).toEqual({ checked: 0, corrected: 0, lastId: undefined });
      await expectExactUsage(store(), inboxes, 'recount of exact counters');
    });

    it.skipIf(overwrite === undefined)('recountUsage sets counters an earlier release left wrong to a recount, batch by batch', async () => {
      const tamper = overwrite ?? (() => Promise.reject(new Error('no overwrite hook')));
      const [a, b, c, d, e, f] = await Promise.all(Array.from({ length: 6 }, () => addInbox(store(), { expiresAt: at(60) })));
      if (a === undefined || b === undefined || c === undefined || d === undefined || e === undefined || f === undefined) throw new Error('six inboxes expected');
      const all = [a, b, c, d, e, f];
      await deliver(store(), [a.id, b.id, c.id], { raw: rawOfSize(300), attachments: [makeAttachment(new Uint8Array(40))] });
      await deliverOne(store(), a.id, { raw: rawOfSize(41) });
      const gone = await deliverOne(store(), b.id, { raw: rawOfSize(52) });
      await deliverOne(store(), e.id, { raw: rawOfSize(63) });
      await expectExactUsage(store(), all, 'before the old node');

      // What an old node's writes leave: a delivery it stored (a counts one too few), a copy it
      // deleted (b still counts it), a byte count off alone (c), a count on an empty inbox (d).
      await tamper(store(), a.id, { messages: 1, bytes: 300 });
      expect(await store().deleteMessage(gone)).toBe(true);
      await tamper(store(), b.id, { messages: 2, bytes: 300 + 52 });
      await tamper(store(), c.id, { messages: 1, bytes: 7 });
      await tamper(store(), d.id, { messages: 3, bytes: 3000 });
      expect(await inboxUsage(store(), a.id)).toEqual({ messages: 1, bytes: 300 });

      // Two inboxes a batch: three full batches, then an empty one ends it.
      expect(await recountAll(store(), 2)).toEqual({ batches: [2, 2, 2, 0], checked: 6, corrected: 4 });
      await expectExactUsage(store(), all, 'after the recount');
      expect(await inboxUsage(store(), a.id)).toEqual({ messages: 2, bytes: 341 });
      expect(await inboxUsage(store(), d.id)).toEqual({ messages: 0, bytes: 0 });
      expect(await recountAll(store(), 2)).toEqual({ batches: [2, 2, 2, 0], checked: 6, corrected: 0 });

      // The writes go on from the corrected counters.
      await deliverOne(store(), d.id, { raw: rawOfSize(9) });
      await tamper(store(), f.id, { messages: 0, bytes: 1 });
      expect(await recountAll(store(), 4)).toEqual({ batches: [4, 2], checked: 6, corrected: 1 });
      await expectExactUsage(store(), all, 'after more writes');
    });

    it('concurrent deliveries never pass the cap that the stored usage reaches', async () => {
      const inbox = await addInbox(store(), { expiresAt: at(60) });
      const stored = await Promise.all(Array.from({ length: 12 }, (_, i) => deliverOne(store(), inbox.id, { raw: rawOfSize(100 + i) })));
      // Free the room of 3 messages, then race 12 deliveries for it.
      for (const id of stored.slice(0, 3)) await store().deleteMessage(id);
      const policy = openPolicy(at(1), { free: { maxMessages: 12, maxBytes: 1024 ** 3 } });
      const results = await Promise.all(Array.from({ length: 12 }, () => store().insertMessage(makeMail({ raw: rawOfSize(10) }), [inbox.id], policy)));
      expect(results.filter((outcomes) => storedIds(outcomes).size === 1)).toHaveLength(3);
      await expectExactUsage(store(), [inbox], 'after the race');
      expect((await inboxUsage(store(), inbox.id)).messages).toBe(12);
    });
  });
}
