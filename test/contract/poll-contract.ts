import { describe, expect, it } from 'vitest';
import type { Inbox, Session } from '../../src/domain/types.js';
import type { InboxPoll, PollQuery } from '../../src/ports/mail-store.js';
import { addInbox, at, deliver, deliverOne, makeLicense, makeSession, openPolicy, makeMail, type StoreGetter } from './mail-store-fixtures.js';
import { listMessageIds } from '../helpers/store-reads.js';

/** More ids than any inbox of these tests holds: the poll reads them all. */
const ALL = 50;

/**
 * pollInbox: a poll's session, inbox, mark and first ids in one operation, answering what
 * findSession, findInboxByUsername (with the ownership rule), markInbox and listMessageIds
 * answer one by one.
 */
export function describePollContract(store: StoreGetter): void {
  describe('pollInbox', () => {
    const addSession = async (overrides: Partial<Session> = {}) => {
      const session = makeSession(overrides);
      await store().insertSession(session);
      return session;
    };
    const poll = (session: Session, inbox: Pick<Inbox, 'username'> | null, rest: Partial<PollQuery> = {}) =>
      store().pollInbox({ tokenHash: session.tokenHash, username: inbox?.username ?? '', now: at(2), ...rest });
    /** What the separate reads answer for the owner's active inbox. */
    const separately = async (session: Session, inbox: Inbox, sinceId: string | undefined, idLimit: number): Promise<InboxPoll> => ({
      session: await store().findSession(session.tokenHash, at(2)),
      inbox: await store().findInboxByUsername(inbox.username),
      mark: await store().markInbox(inbox.id, sinceId),
      ids: idLimit === 0 ? null : (await listMessageIds(store(), inbox.id, { sinceId, limit: idLimit })).ids,
    });

    it("answers the owner what the separate reads answer: session, inbox, mark and ids, with and without since", async () => {
      const session = await addSession();
      const inbox = await addInbox(store(), { sessionId: session.id });
      const other = await addInbox(store(), { sessionId: session.id });
      expect(await poll(session, inbox, { idLimit: ALL })).toEqual(await separately(session, inbox, undefined, ALL));
      const ids: string[] = [];
      for (let i = 0; i < 5; i += 1) ids.push(await deliverOne(store(), inbox.id));
      const foreign = await deliverOne(store(), other.id);
      const [m1, m2, , , m5] = ids;
      for (const sinceId of [undefined, m1, m2, m5, foreign, 'unknown-id']) {
        for (const idLimit of [0, 2, ALL]) {
          const polled = await poll(session, inbox, { sinceId, idLimit });
          expect(polled).toEqual(await separately(session, inbox, sinceId, idLimit));
        }
      }
      expect(await poll(session, inbox, { idLimit: ALL })).toMatchObject({ mark: { count: 5, nothingSince: false }, ids: [...ids].reverse() });
      expect(await poll(session, inbox, { sinceId: m5, idLimit: ALL })).toMatchObject({ mark: { nothingSince: true }, ids: [] });
      expect(await poll(session, inbox, { sinceId: m2, idLimit: 2 })).toMatchObject({ ids: [ids[4], ids[3]] });
      // The version moves with the inbox's messages, as markInbox's.
      const before = (await poll(session, inbox)).mark?.version;
      await store().deleteMessage(m2 ?? '');
      const after = await poll(session, inbox, { idLimit: ALL });
      expect(after.mark?.version).not.toBe(before);
      expect(after).toEqual(await separately(session, inbox, undefined, ALL));
    });

    it('answers a session of the license that owns the inbox, and nobody else', async () => {
      const license = makeLicense();
      await store().insertLicenses([license]);
      const creator = await addSession({ licenseId: license.id });
      const sharer = await addSession({ licenseId: license.id });
      const stranger = await addSession();
      const otherLicense = makeLicense();
      await store().insertLicenses([otherLicense]);
      const otherHolder = await addSession({ licenseId: otherLicense.id });
      const inbox = await addInbox(store(), { sessionId: creator.id, licenseId: license.id });
      const messageId = await deliverOne(store(), inbox.id);
      for (const reader of [creator, sharer]) {
        const polled = await poll(reader, inbox, { idLimit: ALL });
        expect(polled).toEqual({ ...(await separately(reader, inbox, undefined, ALL)), session: reader });
        expect(polled.ids).toEqual([messageId]);
      }
      // Another owner's inbox: the session only, nothing of the inbox.
      for (const reader of [stranger, otherHolder]) {
        expect(await poll(reader, inbox, { idLimit: ALL, sinceId: messageId })).toEqual({ session: reader, inbox: null, mark: null, ids: null });
      }
      // A free inbox (no license) is not shared by sessions without a license either.
      const free = await addInbox(store(), { sessionId: creator.id });
      expect(await poll(stranger, free, { idLimit: ALL })).toEqual({ session: stranger, inbox: null, mark: null, ids: null });
    });

    it('reads no inbox without a live session, and no mark of an expired inbox', async () => {
      const session = await addSession();
      const expiredSession = await addSession({ expiresAt: at(2) });
      const inbox = await addInbox(store(), { sessionId: session.id, expiresAt: at(30) });
      await deliverOne(store(), inbox.id);
      const nobody = { session: null, inbox: null, mark: null, ids: null };
      expect(await poll(makeSession(), inbox, { idLimit: ALL })).toEqual(nobody);
      // expires_at is not after now: expired, as findSession says.
      expect(await poll(expiredSession, inbox, { idLimit: ALL })).toEqual(nobody);
      expect(await store().findSession(expiredSession.tokenHash, at(2))).toBeNull();
      // Missing name, and no name at all: the session alone.
      expect(await poll(session, { username: 'nosuchname' }, { idLimit: ALL })).toEqual({ session, inbox: null, mark: null, ids: null });
      expect(await poll(session, null)).toEqual({ session, inbox: null, mark: null, ids: null });
      // The inbox expired (its expires_at is not after now): found, but neither mark nor ids.
      expect(await poll(session, inbox, { now: at(30), idLimit: ALL })).toEqual({
        session: await store().findSession(session.tokenHash, at(30)),
        inbox,
        mark: null,
        ids: null,
      });
    });

    it('reads the mark no later than the ids while messages arrive', async () => {
      const session = await addSession();
      const inbox = await addInbox(store(), { sessionId: session.id });
      const writes = Array.from({ length: 20 }, (_, i) => deliver(store(), [inbox.id], { subject: `m${i}` }));
      const polls = Array.from({ length: 20 }, () => poll(session, inbox, { idLimit: ALL }));
      await Promise.all(writes);
      for (const polled of await Promise.all(polls)) {
        // A message landing in between may add an id, never a count: the ETag made from the
        // mark is never newer than the listing made from the ids.
        expect(polled.ids?.length ?? 0).toBeGreaterThanOrEqual(polled.mark?.count ?? 0);
        expect(polled.ids?.length ?? 0).toBeLessThanOrEqual(20);
      }
      // And a message stored while nobody polls shows in the next poll.
      await store().insertMessage(makeMail(), [inbox.id], openPolicy());
      expect((await poll(session, inbox, { idLimit: ALL })).ids).toHaveLength(21);
    });
  });
}
