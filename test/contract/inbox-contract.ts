import { describe, expect, it } from 'vitest';
import {
  addInbox,
  allByteValues,
  at,
  deliver,
  deliverOne,
  expectBytes,
  makeAttachment,
  makeInbox,
  makeLicense,
  makeSession,
  type StoreGetter,
} from './mail-store-fixtures.js';
import { countMessages, listMessages } from '../helpers/store-reads.js';

/** Inboxes: name uniqueness and takeover, ownership by session and license, adoption, deletion. */
export function describeInboxContract(store: StoreGetter): void {
  describe('inboxes', () => {
    it('finds a stored inbox by username and by id, with every field intact', async () => {
      const inbox = await addInbox(store(), { sessionId: 's1', licenseId: null });
      const premium = await addInbox(store(), { sessionId: null, licenseId: 'l1', domain: 'other.test' });
      expect(await store().findInboxByUsername(inbox.username)).toEqual(inbox);
      expect(await store().findInboxById(inbox.id)).toEqual(inbox);
      expect(await store().findInboxById(premium.id)).toEqual(premium);
      expect(await store().findInboxByUsername('nobody')).toBeNull();
      expect(await store().findInboxById('missing')).toBeNull();
    });

    it('a username held by an active inbox is taken, on every domain, and the holder stays intact', async () => {
      const holder = await addInbox(store(), { expiresAt: at(30) });
      const messageId = await deliverOne(store(), holder.id);
      const rival = makeInbox({ username: holder.username, domain: 'other.test' });
      expect(await store().insertInbox(rival, at(29))).toBe('taken');
      expect(await store().findInboxByUsername(holder.username)).toEqual(holder);
      expect(await store().findInboxById(rival.id)).toBeNull();
      expect(await store().findMessage(messageId)).not.toBeNull();
    });

    it('an inbox id already in use is taken', async () => {
      const holder = await addInbox(store());
      expect(await store().insertInbox(makeInbox({ id: holder.id }), at(1))).toBe('taken');
      expect(await store().findInboxById(holder.id)).toEqual(holder);
    });

    it('an expired holder is replaced, and its mail is gone for the new holder', async () => {
      const old = await addInbox(store(), { expiresAt: at(30), sessionId: 'old' });
      const messageId = await deliverOne(store(), old.id, { attachments: [makeAttachment(allByteValues())] });
      const attachmentId = (await store().findMessage(messageId))?.attachments[0]?.id ?? '';

      // Expired exactly at expires_at: now >= expires_at.
      const successor = makeInbox({ username: old.username, sessionId: 'new', createdAt: at(30), expiresAt: at(60) });
      expect(await store().insertInbox(successor, at(30))).toBe('created');

      expect(await store().findInboxByUsername(old.username)).toEqual(successor);
      expect(await store().findInboxById(old.id)).toBeNull();
      expect(await store().findMessage(messageId)).toBeNull();
      expect(await store().findRawMessage(messageId)).toBeNull();
      expect(await store().findAttachment(messageId, attachmentId)).toBeNull();
      expect(await countMessages(store(), successor.id)).toBe(0);
      expect(await listMessages(store(), successor.id)).toEqual([]);
      expect(await countMessages(store(), old.id)).toBe(0);
    });

    it('a takeover keeps the copies the old holder shared with other inboxes', async () => {
      const old = await addInbox(store(), { expiresAt: at(30) });
      const other = await addInbox(store(), { expiresAt: at(300) });
      const content = allByteValues();
      const ids = await deliver(store(), [old.id, other.id], { attachments: [makeAttachment(content)] });
      expect(await store().insertInbox(makeInbox({ username: old.username, expiresAt: at(90) }), at(31))).toBe('created');

      const otherId = ids.get(other.id) ?? '';
      const listed = await listMessages(store(), other.id);
      expect(listed.map((m) => m.id)).toEqual([otherId]);
      const attachment = listed[0]?.attachments[0];
      expectBytes((await store().findAttachment(otherId, attachment?.id ?? ''))?.content, content);
      expect(await store().findRawMessage(otherId)).not.toBeNull();
    });

    it('keeps an expired inbox findable until it is swept or replaced', async () => {
      const inbox = await addInbox(store(), { expiresAt: at(5) });
      expect(await store().findInboxByUsername(inbox.username)).toEqual(inbox);
      expect(await store().findInboxById(inbox.id)).toEqual(inbox);
    });

    it('listActiveInboxes of a free session: its own active inboxes, newest first, with counts', async () => {
      const first = await addInbox(store(), { sessionId: 's1', createdAt: at(0), expiresAt: at(30) });
      const second = await addInbox(store(), { sessionId: 's1', createdAt: at(2), expiresAt: at(40) });
      await addInbox(store(), { sessionId: 's1', createdAt: at(3), expiresAt: at(5) });
      await addInbox(store(), { sessionId: 's2', createdAt: at(4), expiresAt: at(40) });
      // Owned by nobody: a null license must never match null license_id rows.
      await addInbox(store(), { sessionId: null, licenseId: null, createdAt: at(4), expiresAt: at(40) });
      await deliverOne(store(), first.id);
      await deliverOne(store(), first.id);
      await deliverOne(store(), second.id);

      const listed = await store().listActiveInboxes({ sessionId: 's1', licenseId: null }, at(10));
      expect(listed).toEqual([
        { ...second, messageCount: 1 },
        { ...first, messageCount: 2 },
      ]);
    });

    it('listActiveInboxes of a premium session adds every active inbox of its license', async () => {
      const own = await addInbox(store(), { sessionId: 's1', licenseId: null, createdAt: at(1), expiresAt: at(30) });
      const fromOtherDevice = await addInbox(store(), { sessionId: 's2', licenseId: 'lic', createdAt: at(2), expiresAt: at(300) });
      await addInbox(store(), { sessionId: 's2', licenseId: 'lic', createdAt: at(3), expiresAt: at(4) });
      await addInbox(store(), { sessionId: 's3', licenseId: 'other', createdAt: at(3), expiresAt: at(300) });

      const listed = await store().listActiveInboxes({ sessionId: 's1', licenseId: 'lic' }, at(10));
      expect(listed.map((i) => i.id)).toEqual([fromOtherDevice.id, own.id]);
      const viaOtherSession = await store().listActiveInboxes({ sessionId: 's9', licenseId: 'lic' }, at(10));
      expect(viaOtherSession).toEqual([{ ...fromOtherDevice, messageCount: 0 }]);
    });

    it('insertLicenseInbox counts only the active inboxes of the license against its maximum', async () => {
      const license = makeLicense();
      await store().insertLicenses([license]);
      await addInbox(store(), { licenseId: license.id, expiresAt: at(30) });
      await addInbox(store(), { licenseId: license.id, expiresAt: at(5) });
      await addInbox(store(), { licenseId: 'other', expiresAt: at(60) });
      const second = { ...makeInbox({ expiresAt: at(60) }), licenseId: license.id };
      expect(await store().insertLicenseInbox(second, at(10), 2)).toBe('created');
      const third = { ...makeInbox({ expiresAt: at(60) }), licenseId: license.id };
      expect(await store().insertLicenseInbox(third, at(10), 2)).toBe('limit_reached');
      expect(await store().findInboxById(third.id)).toBeNull();
      // At 30 the first has expired: room again.
      expect(await store().insertLicenseInbox({ ...third, createdAt: at(30) }, at(30), 2)).toBe('created');
      const clash = { ...makeInbox({ username: second.username }), licenseId: license.id };
      expect(await store().insertLicenseInbox(clash, at(31), 5)).toBe('taken');
    });

    it('getOrCreateFreeInbox returns the newest active inbox the owner reads, else inserts', async () => {
      const session = makeSession();
      await store().insertSession(session);
      const owner = { sessionId: session.id, licenseId: null };
      const first = makeInbox({ sessionId: session.id, expiresAt: at(30) });
      expect(await store().getOrCreateFreeInbox(first, owner, at(1))).toEqual({ status: 'created', inbox: first });
      expect(await store().getOrCreateFreeInbox(makeInbox({ sessionId: session.id }), owner, at(2))).toEqual({ status: 'existing', inbox: first });
      // Expired: a new one is made.
      const next = makeInbox({ sessionId: session.id, createdAt: at(30), expiresAt: at(60) });
      expect(await store().getOrCreateFreeInbox(next, owner, at(30))).toEqual({ status: 'created', inbox: next });
      const clash = makeInbox({ sessionId: 'other', username: next.username });
      expect(await store().getOrCreateFreeInbox(clash, { sessionId: 'other', licenseId: null }, at(31))).toEqual({ status: 'taken' });
    });

    it('deleteInbox deletes the inbox and its mail, keeps shared copies, and frees the name', async () => {
      const doomed = await addInbox(store());
      const other = await addInbox(store());
      const content = allByteValues();
      const shared = await deliver(store(), [doomed.id, other.id], { attachments: [makeAttachment(content)] });
      const own = await deliverOne(store(), doomed.id, { attachments: [makeAttachment(new Uint8Array([1, 2, 3]))] });
      const ownAttachment = (await store().findMessage(own))?.attachments[0]?.id ?? '';

      expect(await store().deleteInbox(doomed.id)).toBe(true);
      expect(await store().findInboxById(doomed.id)).toBeNull();
      expect(await store().findMessage(own)).toBeNull();
      expect(await store().findMessage(shared.get(doomed.id) ?? '')).toBeNull();
      expect(await store().findAttachment(own, ownAttachment)).toBeNull();
      expect(await countMessages(store(), doomed.id)).toBe(0);

      const kept = shared.get(other.id) ?? '';
      const keptView = await store().findMessage(kept);
      expectBytes((await store().findAttachment(kept, keptView?.attachments[0]?.id ?? ''))?.content, content);
      expect(await store().deleteInbox(doomed.id)).toBe(false);
      expect(await store().insertInbox(makeInbox({ username: doomed.username }), at(1))).toBe('created');
    });

    it('callers cannot change a stored inbox through the objects they passed or got', async () => {
      const inbox = makeInbox({ expiresAt: at(30) });
      await store().insertInbox(inbox, at(0));
      inbox.expiresAt.setTime(at(999).getTime());
      inbox.username = 'changed';
      const found = await store().findInboxById(inbox.id);
      found?.createdAt.setTime(0);
      const again = await store().findInboxById(inbox.id);
      expect(again?.expiresAt).toEqual(at(30));
      expect(again?.createdAt).toEqual(at(0));
      expect(again?.username).not.toBe('changed');
    });
  });
}
