import { describe, expect, it } from 'vitest';
import { addInbox, allByteValues, at, deliver, deliverOne, expectBytes, makeAttachment, makeSession, type StoreGetter } from './mail-store-fixtures.js';
import { countMessages } from '../helpers/store-reads.js';

/** The sweeper's deleteExpired: bounded batches that never touch active data. */
export function describeExpiryContract(store: StoreGetter): void {
  describe('deleteExpired', () => {
    it('deletes expired inboxes with their messages and expired sessions, and nothing active', async () => {
      const expired = await addInbox(store(), { expiresAt: at(10) });
      const active = await addInbox(store(), { expiresAt: at(60) });
      const gone = await deliverOne(store(), expired.id, { attachments: [makeAttachment(new Uint8Array([1]))] });
      await deliverOne(store(), expired.id);
      const kept = await deliverOne(store(), active.id, { attachments: [makeAttachment(allByteValues())] });
      const oldSession = makeSession({ expiresAt: at(10) });
      const liveSession = makeSession({ expiresAt: at(60) });
      await store().insertSession(oldSession);
      await store().insertSession(liveSession);

      expect(await store().deleteExpired(at(20), 100)).toEqual({ inboxes: 1, messages: 2, sessions: 1 });

      expect(await store().findInboxById(expired.id)).toBeNull();
      expect(await store().findMessage(gone)).toBeNull();
      expect(await countMessages(store(), expired.id)).toBe(0);
      expect(await store().findInboxById(active.id)).toEqual(active);
      const keptView = await store().findMessage(kept);
      expectBytes((await store().findAttachment(kept, keptView?.attachments[0]?.id ?? ''))?.content, allByteValues());
      expect(await store().findSession(liveSession.tokenHash, at(20))).not.toBeNull();
      expect(await store().deleteExpired(at(20), 100)).toEqual({ inboxes: 0, messages: 0, sessions: 0 });
    });

    it('an inbox or session expires exactly at expires_at, not a millisecond before', async () => {
      await addInbox(store(), { expiresAt: at(10) });
      await store().insertSession(makeSession({ expiresAt: at(10) }));
      const justBefore = new Date(at(10).getTime() - 1);
      expect(await store().deleteExpired(justBefore, 10)).toEqual({ inboxes: 0, messages: 0, sessions: 0 });
      expect(await store().deleteExpired(at(10), 10)).toEqual({ inboxes: 1, messages: 0, sessions: 1 });
    });

    it('works in batches of at most `limit` inboxes and `limit` sessions', async () => {
      const expired = [];
      for (let i = 0; i < 5; i += 1) expired.push(await addInbox(store(), { expiresAt: at(1 + i) }));
      for (const inbox of expired) await deliverOne(store(), inbox.id);
      for (let i = 0; i < 3; i += 1) await store().insertSession(makeSession({ expiresAt: at(1 + i) }));
      const active = await addInbox(store(), { expiresAt: at(100) });
      await deliverOne(store(), active.id);

      expect(await store().deleteExpired(at(50), 2)).toEqual({ inboxes: 2, messages: 2, sessions: 2 });
      expect(await store().deleteExpired(at(50), 2)).toEqual({ inboxes: 2, messages: 2, sessions: 1 });
      expect(await store().deleteExpired(at(50), 2)).toEqual({ inboxes: 1, messages: 1, sessions: 0 });
      expect(await store().deleteExpired(at(50), 2)).toEqual({ inboxes: 0, messages: 0, sessions: 0 });
      for (const inbox of expired) expect(await store().findInboxById(inbox.id)).toBeNull();
      expect(await countMessages(store(), active.id)).toBe(1);
    });

    it('a limit of zero deletes nothing', async () => {
      await addInbox(store(), { expiresAt: at(1) });
      await store().insertSession(makeSession({ expiresAt: at(1) }));
      expect(await store().deleteExpired(at(50), 0)).toEqual({ inboxes: 0, messages: 0, sessions: 0 });
    });

    it('keeps the copies an expired inbox shared with an active one', async () => {
      const expired = await addInbox(store(), { expiresAt: at(10) });
      const active = await addInbox(store(), { expiresAt: at(100) });
      const raw = allByteValues();
      const content = new Uint8Array([5, 4, 3, 2, 1]);
      const ids = await deliver(store(), [expired.id, active.id], { raw, attachments: [makeAttachment(content)] });
      expect(await store().deleteExpired(at(20), 10)).toEqual({ inboxes: 1, messages: 1, sessions: 0 });

      const copy = ids.get(active.id) ?? '';
      expectBytes((await store().findRawMessage(copy))?.raw, raw);
      const view = await store().findMessage(copy);
      expectBytes((await store().findAttachment(copy, view?.attachments[0]?.id ?? ''))?.content, content);
    });

    it('never sweeps an inbox that expires in year 9999 (the postmaster inbox)', async () => {
      const postmaster = await addInbox(store(), { username: 'postmaster', expiresAt: new Date(Date.UTC(9999, 0, 1)) });
      await deliverOne(store(), postmaster.id);
      expect(await store().deleteExpired(new Date(Date.UTC(2999, 0, 1)), 100)).toEqual({ inboxes: 0, messages: 0, sessions: 0 });
      expect(await store().findInboxByUsername('postmaster')).toEqual(postmaster);
      expect(await countMessages(store(), postmaster.id)).toBe(1);
    });

    it('concurrent sweeps delete each row once', async () => {
      for (let i = 0; i < 6; i += 1) {
        const inbox = await addInbox(store(), { expiresAt: at(1) });
        await deliverOne(store(), inbox.id);
      }
      const results = await Promise.all([store().deleteExpired(at(5), 4), store().deleteExpired(at(5), 4), store().deleteExpired(at(5), 4)]);
      const total = results.reduce((sum, r) => ({ inboxes: sum.inboxes + r.inboxes, messages: sum.messages + r.messages }), { inboxes: 0, messages: 0 });
      expect(total).toEqual({ inboxes: 6, messages: 6 });
    });
  });
}
