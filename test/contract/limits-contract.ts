import { describe, expect, it } from 'vitest';
import type { InsertOutcome } from '../../src/ports/mail-store.js';
import { addInbox, at, makeInbox, makeLicense, makeMail, makeSession, openPolicy, type StoreGetter } from './mail-store-fixtures.js';
import { countMessages, inboxUsage } from '../helpers/store-reads.js';

/** A license's inbox maximum in these tests (PREMIUM_MAX_INBOXES default). */
const MAX_INBOXES = 10;
/** A message cap in these tests (FREE_MAX_MESSAGES default). */
const MAX_MESSAGES = 100;

/** `count` calls of `call` started at once; resolves with every result. */
function concurrently<T>(count: number, call: (i: number) => Promise<T>): Promise<T[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => call(i)));
}

/** How often each value occurs. */
function tally(values: readonly string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

/** `size` bytes of a message (the raw size is what the byte cap counts). */
function rawOfSize(size: number): Uint8Array {
  return new TextEncoder().encode('x'.repeat(size));
}

/**
 * Every limit is one store operation that counts and writes atomically (docs/api.md "Fair
 * use and limits"): concurrent callers, as several requests or nodes at once, never pass it.
 */
export function describeLimitsContract(store: StoreGetter): void {
  describe('limits under concurrent callers', () => {
    it(`50 concurrent inbox creates of one license make exactly ${MAX_INBOXES}`, async () => {
      const license = makeLicense();
      await store().insertLicenses([license]);
      const results = await concurrently(50, () =>
        store().insertLicenseInbox({ ...makeInbox({ expiresAt: at(60) }), licenseId: license.id }, at(1), MAX_INBOXES),
      );
      expect(tally(results)).toEqual({ created: MAX_INBOXES, limit_reached: 50 - MAX_INBOXES });
      expect(await store().listActiveInboxes({ sessionId: 'any', licenseId: license.id }, at(1))).toHaveLength(MAX_INBOXES);
    });

    it('20 concurrent creates in one free session make one inbox, and every caller gets it', async () => {
      const session = makeSession();
      await store().insertSession(session);
      const owner = { sessionId: session.id, licenseId: null };
      const results = await concurrently(20, () => store().getOrCreateFreeInbox(makeInbox({ sessionId: session.id }), owner, at(1)));
      const ids = results.map((result) => (result.status === 'taken' ? 'taken' : result.inbox.id));
      expect(new Set(ids).size).toBe(1);
      expect(tally(results.map((result) => result.status))).toEqual({ created: 1, existing: 19 });
      expect(await store().listActiveInboxes(owner, at(1))).toHaveLength(1);
    });

    it('30 concurrent redeems of a 5-session license from 30 sessions: exactly 5 succeed', async () => {
      const license = makeLicense({ maxSessions: 5 });
      await store().insertLicenses([license]);
      const sessions = Array.from({ length: 30 }, () => makeSession());
      for (const session of sessions) await store().insertSession(session);
      const results = await concurrently(30, (i) =>
        store().redeemLicense(sessions[i]?.id ?? '', license.id, at(1), { maxInboxes: MAX_INBOXES, premiumTtlMs: 60_000 }),
      );
      expect(tally(results)).toEqual({ redeemed: 5, session_limit: 25 });
      const [usage] = await store().listLicenses(at(1));
      expect(usage?.sessions).toBe(5);
    });

    it('concurrent redeems adopt free inboxes only up to the license inbox maximum', async () => {
      const license = makeLicense({ maxSessions: 30 });
      await store().insertLicenses([license]);
      const sessions = Array.from({ length: 15 }, () => makeSession());
      for (const session of sessions) {
        await store().insertSession(session);
        await addInbox(store(), { sessionId: session.id, expiresAt: at(30) });
      }
      await concurrently(15, (i) => store().redeemLicense(sessions[i]?.id ?? '', license.id, at(1), { maxInboxes: 4, premiumTtlMs: 60 * 60_000 }));
      expect((await store().listLicenses(at(1)))[0]?.activeInboxes).toBe(4);
    });

    it(`15 concurrent deliveries to an inbox holding 95 of ${MAX_MESSAGES} messages: exactly 5 are stored`, async () => {
      const inbox = await addInbox(store(), { expiresAt: at(60) });
      for (let i = 0; i < 95; i += 1) await store().insertMessage(makeMail(), [inbox.id], openPolicy());
      const policy = openPolicy(at(1), { free: { maxMessages: MAX_MESSAGES, maxBytes: 1024 ** 3 } });
      const results = await concurrently(15, () => store().insertMessage(makeMail(), [inbox.id], policy));
      expect(tally(results.map((r) => r.get(inbox.id)?.status ?? 'none'))).toEqual({ stored: 5, full: 10 });
      expect(await countMessages(store(), inbox.id)).toBe(MAX_MESSAGES);
    });

    it('15 concurrent deliveries to an inbox 5 messages short of its byte cap: exactly 5 are stored', async () => {
      const size = 1000;
      const inbox = await addInbox(store(), { licenseId: 'lic', expiresAt: at(60) });
      for (let i = 0; i < 20; i += 1) await store().insertMessage(makeMail({ raw: rawOfSize(size) }), [inbox.id], openPolicy());
      // The premium quota applies: a license owns the inbox. 25 messages of 1000 bytes fit.
      const policy = openPolicy(at(1), { premium: { maxMessages: 1000, maxBytes: 25 * size }, free: { maxMessages: 1, maxBytes: 1 } });
      const results = await concurrently(15, () => store().insertMessage(makeMail({ raw: rawOfSize(size) }), [inbox.id], policy));
      expect(tally(results.map((r) => r.get(inbox.id)?.status ?? 'none'))).toEqual({ stored: 5, full: 10 });
      expect(await inboxUsage(store(), inbox.id)).toEqual({ messages: 25, bytes: 25 * size });
    });

    it('a message that alone would pass the byte cap is refused as full; a smaller one still fits', async () => {
      const inbox = await addInbox(store(), { expiresAt: at(60) });
      const policy = openPolicy(at(1), { free: { maxMessages: 10, maxBytes: 500 } });
      expect((await store().insertMessage(makeMail({ raw: rawOfSize(501) }), [inbox.id], policy)).get(inbox.id)).toEqual({ status: 'full' });
      expect((await store().insertMessage(makeMail({ raw: rawOfSize(500) }), [inbox.id], policy)).get(inbox.id)?.status).toBe('stored');
      expect((await store().insertMessage(makeMail({ raw: rawOfSize(1) }), [inbox.id], policy)).get(inbox.id)).toEqual({ status: 'full' });
    });

    it('an inbox expired at store time gets nothing; unlimited inboxes skip the quota; one outcome per inbox', async () => {
      const expired = await addInbox(store(), { expiresAt: at(10) });
      const full = await addInbox(store(), { expiresAt: at(60) });
      const open = await addInbox(store(), { expiresAt: at(60) });
      const postmaster = await addInbox(store(), { expiresAt: at(60) });
      await store().insertMessage(makeMail(), [full.id, postmaster.id], openPolicy());
      const policy = openPolicy(at(10), { free: { maxMessages: 1, maxBytes: 1024 ** 3 }, unlimited: [postmaster.id] });
      const outcomes = await store().insertMessage(makeMail(), [expired.id, full.id, 'missing', open.id, postmaster.id, open.id], policy);
      const statuses = new Map([...outcomes].map(([id, outcome]): [string, InsertOutcome['status']] => [id, outcome.status]));
      expect([...statuses]).toEqual([
        [expired.id, 'expired'],
        [full.id, 'full'],
        ['missing', 'missing'],
        [open.id, 'stored'],
        [postmaster.id, 'stored'],
      ]);
      expect(await countMessages(store(), expired.id)).toBe(0);
      expect(await countMessages(store(), full.id)).toBe(1);
      expect(await countMessages(store(), postmaster.id)).toBe(2);
      // Expired exactly at expires_at: nothing stored, no orphaned content either.
      const alone = await store().insertMessage(makeMail(), [expired.id], policy);
      expect(alone.get(expired.id)).toEqual({ status: 'expired' });
    });

    it('inboxUsage reports messages and raw bytes', async () => {
      const inbox = await addInbox(store(), { expiresAt: at(60) });
      expect(await inboxUsage(store(), inbox.id)).toEqual({ messages: 0, bytes: 0 });
      await store().insertMessage(makeMail({ raw: rawOfSize(300) }), [inbox.id], openPolicy());
      await store().insertMessage(makeMail({ raw: rawOfSize(200) }), [inbox.id], openPolicy());
      expect(await inboxUsage(store(), inbox.id)).toEqual({ messages: 2, bytes: 500 });
      expect(await inboxUsage(store(), 'missing')).toEqual({ messages: 0, bytes: 0 });
    });
  });
}
