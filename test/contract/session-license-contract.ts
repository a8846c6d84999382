import { describe, expect, it } from 'vitest';
import { addInbox, at, deliverOne, makeInbox, makeLicense, makeSession, type StoreGetter } from './mail-store-fixtures.js';

/** Redeem rules with room to spare. */
const RULES = { maxInboxes: 10, premiumTtlMs: 30 * 24 * 3600 * 1000 };

/** Sessions and licenses: lookups, expiry boundaries, revocation and usage counts. */
export function describeSessionLicenseContract(store: StoreGetter): void {
  describe('sessions', () => {
    it('finds a stored session by token hash, with every field intact', async () => {
      const session = makeSession({ licenseId: 'lic-1' });
      await store().insertSession(session);
      const found = await store().findSession(session.tokenHash, at(1));
      expect(found).toEqual(session);
      expect(found?.createdAt).toBeInstanceOf(Date);
    });

    it('returns null for an unknown token hash', async () => {
      await store().insertSession(makeSession());
      expect(await store().findSession('f'.repeat(64), at(1))).toBeNull();
    });

    it('a session is valid strictly before expires_at', async () => {
      const session = makeSession({ expiresAt: at(10) });
      await store().insertSession(session);
      expect(await store().findSession(session.tokenHash, new Date(at(10).getTime() - 1))).not.toBeNull();
      expect(await store().findSession(session.tokenHash, at(10))).toBeNull();
      expect(await store().findSession(session.tokenHash, at(11))).toBeNull();
    });

    it('insertSessionWithInbox stores both, or neither when the name is taken', async () => {
      const session = makeSession();
      const inbox = makeInbox({ sessionId: session.id });
      expect(await store().insertSessionWithInbox(session, inbox, at(1))).toBe('created');
      expect(await store().findSession(session.tokenHash, at(1))).toEqual(session);
      expect(await store().findInboxByUsername(inbox.username)).toEqual(inbox);

      const loser = makeSession();
      expect(await store().insertSessionWithInbox(loser, makeInbox({ username: inbox.username, sessionId: loser.id }), at(1))).toBe('taken');
      expect(await store().findSession(loser.tokenHash, at(1))).toBeNull();
      // The same session goes in with another name: nothing of the failed try is left in the way.
      const second = makeInbox({ sessionId: loser.id });
      expect(await store().insertSessionWithInbox(loser, second, at(1))).toBe('created');
      expect(await store().listActiveInboxes({ sessionId: loser.id, licenseId: null }, at(1))).toMatchObject([{ id: second.id }]);
    });

    it('insertSessionWithInbox at once for many sessions: a taken name fails alone', async () => {
      const held = await addInbox(store(), { expiresAt: at(60) });
      const sessions = Array.from({ length: 6 }, () => makeSession());
      const inboxes = sessions.map((session, i) => makeInbox({ sessionId: session.id, ...(i === 3 ? { username: held.username } : {}) }));
      const results = await Promise.all(sessions.map((session, i) => store().insertSessionWithInbox(session, inboxes[i] ?? makeInbox(), at(1))));
      expect(results).toEqual(['created', 'created', 'created', 'taken', 'created', 'created']);
      for (const [i, session] of sessions.entries()) {
        expect(await store().findSession(session.tokenHash, at(1)), `session ${i}`).toEqual(i === 3 ? null : session);
      }
      expect((await store().findInboxByUsername(held.username))?.id).toBe(held.id);
    });

    it('insertSessionWithInbox takes over the name of an expired inbox, without its messages', async () => {
      const old = await addInbox(store(), { expiresAt: at(5) });
      const oldMessage = await deliverOne(store(), old.id);
      const session = makeSession();
      const inbox = makeInbox({ username: old.username, sessionId: session.id, expiresAt: at(60) });
      expect(await store().insertSessionWithInbox(session, inbox, at(10))).toBe('created');
      expect((await store().findInboxByUsername(old.username))?.id).toBe(inbox.id);
      expect(await store().findMessage(oldMessage)).toBeNull();
    });

    it('renewSession extends the lifetime', async () => {
      const session = makeSession({ expiresAt: at(10) });
      await store().insertSession(session);
      await store().renewSession(session.id, at(100));
      expect((await store().findSession(session.tokenHash, at(50)))?.expiresAt).toEqual(at(100));
    });

    it('renewSession of an unknown session is a harmless no-op', async () => {
      await expect(store().renewSession('nope', at(5))).resolves.toBeUndefined();
    });

    it('redeemLicense records the license on the session; again is already_redeemed', async () => {
      const license = makeLicense();
      await store().insertLicenses([license]);
      const session = makeSession();
      await store().insertSession(session);
      expect(await store().redeemLicense(session.id, license.id, at(1), RULES)).toBe('redeemed');
      expect((await store().findSession(session.tokenHash, at(1)))?.licenseId).toBe(license.id);
      expect(await store().redeemLicense(session.id, license.id, at(2), RULES)).toBe('already_redeemed');
      expect(await store().redeemLicense('nope', license.id, at(2), RULES)).toBe('no_license');
      expect(await store().redeemLicense(session.id, 'nope', at(2), RULES)).toBe('no_license');
    });

    it('redeemLicense counts only unexpired sessions of that license against max_sessions', async () => {
      const license = makeLicense({ maxSessions: 2 });
      await store().insertLicenses([license]);
      await store().insertSession(makeSession({ licenseId: license.id, expiresAt: at(60) }));
      await store().insertSession(makeSession({ licenseId: license.id, expiresAt: at(5) }));
      await store().insertSession(makeSession({ licenseId: 'other', expiresAt: at(60) }));
      const late = makeSession({ expiresAt: at(60) });
      await store().insertSession(late);
      expect(await store().redeemLicense(late.id, license.id, at(1), RULES)).toBe('session_limit');
      expect((await store().findSession(late.tokenHash, at(1)))?.licenseId).toBeNull();
      expect(await store().redeemLicense(late.id, license.id, at(5), RULES)).toBe('redeemed');
    });

    it('redeemLicense adopts the session\'s active free inbox with the premium expiry, up to the inbox maximum', async () => {
      const license = makeLicense();
      await store().insertLicenses([license]);
      const session = makeSession();
      await store().insertSession(session);
      const free = await addInbox(store(), { sessionId: session.id, createdAt: at(0), expiresAt: at(30) });
      const gone = await addInbox(store(), { sessionId: session.id, createdAt: at(0), expiresAt: at(1) });
      expect(await store().redeemLicense(session.id, license.id, at(2), { maxInboxes: 1, premiumTtlMs: 1000 * 60_000 })).toBe('redeemed');
      expect(await store().findInboxById(free.id)).toEqual({ ...free, licenseId: license.id, expiresAt: at(1000) });
      expect(await store().findInboxById(gone.id)).toEqual(gone);
      const seen = await store().listActiveInboxes({ sessionId: 'another-device', licenseId: license.id }, at(500));
      expect(seen.map((i) => i.id)).toEqual([free.id]);

      // The license is at its maximum of 1: a second session's inbox stays free.
      const second = makeSession();
      await store().insertSession(second);
      const kept = await addInbox(store(), { sessionId: second.id, expiresAt: at(30) });
      expect(await store().redeemLicense(second.id, license.id, at(3), { maxInboxes: 1, premiumTtlMs: 1000 * 60_000 })).toBe('redeemed');
      expect(await store().findInboxById(kept.id)).toEqual(kept);
    });

    it('a second session with the same token hash is rejected', async () => {
      const session = makeSession();
      await store().insertSession(session);
      await expect(store().insertSession(makeSession({ tokenHash: session.tokenHash }))).rejects.toThrow();
    });

    it('callers cannot change a stored session through the objects they passed or got', async () => {
      const session = makeSession({ expiresAt: at(10) });
      await store().insertSession(session);
      session.expiresAt.setTime(at(1000).getTime());
      const found = await store().findSession(session.tokenHash, at(1));
      found?.expiresAt.setTime(at(2000).getTime());
      expect((await store().findSession(session.tokenHash, at(1)))?.expiresAt).toEqual(at(10));
    });
  });

  describe('licenses', () => {
    it('finds licenses by key hash and by id; unknown ones are null', async () => {
      const a = makeLicense({ revokedAt: null });
      const b = makeLicense({ maxSessions: 2, revokedAt: at(3) });
      await store().insertLicenses([a, b]);
      expect(await store().findLicenseByKeyHash(a.keyHash)).toEqual(a);
      expect(await store().findLicenseById(b.id)).toEqual(b);
      expect(await store().findLicenseByKeyHash('0'.repeat(64))).toBeNull();
      expect(await store().findLicenseById('missing')).toBeNull();
    });

    it('inserting no licenses is a no-op', async () => {
      await store().insertLicenses([]);
      expect(await store().listLicenses(at(0))).toEqual([]);
    });

    it('a batch with a duplicate key hash is rejected as a whole', async () => {
      const existing = makeLicense();
      await store().insertLicenses([existing]);
      const fresh = makeLicense();
      await expect(store().insertLicenses([fresh, makeLicense({ keyHash: existing.keyHash })])).rejects.toThrow();
      expect(await store().findLicenseById(fresh.id)).toBeNull();
    });

    it('revokeLicense marks the license and keeps the first revocation instant', async () => {
      const license = makeLicense();
      await store().insertLicenses([license]);
      expect(await store().revokeLicense(license.keyHash, at(5))).toBe(true);
      expect((await store().findLicenseById(license.id))?.revokedAt).toEqual(at(5));
      expect(await store().revokeLicense(license.keyHash, at(9))).toBe(true);
      expect((await store().findLicenseById(license.id))?.revokedAt).toEqual(at(5));
    });

    it('revokeLicense of an unknown key hash is false', async () => {
      expect(await store().revokeLicense('0'.repeat(64), at(5))).toBe(false);
    });

    it('listLicenses lists oldest first with unexpired sessions and active inboxes', async () => {
      const older = makeLicense({ createdAt: at(-10) });
      const newer = makeLicense({ createdAt: at(-5) });
      await store().insertLicenses([newer, older]);
      await store().insertSession(makeSession({ licenseId: older.id, expiresAt: at(60) }));
      await store().insertSession(makeSession({ licenseId: older.id, expiresAt: at(60) }));
      await store().insertSession(makeSession({ licenseId: older.id, expiresAt: at(2) }));
      await store().insertSession(makeSession({ licenseId: newer.id, expiresAt: at(60) }));
      await addInbox(store(), { licenseId: older.id, expiresAt: at(60) });
      await addInbox(store(), { licenseId: older.id, expiresAt: at(2) });
      await addInbox(store(), { licenseId: null, sessionId: 's', expiresAt: at(60) });

      const listed = await store().listLicenses(at(3));
      expect(listed).toEqual([
        { ...older, sessions: 2, activeInboxes: 1 },
        { ...newer, sessions: 1, activeInboxes: 0 },
      ]);
    });
  });
}
