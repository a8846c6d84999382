import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WEBHOOK_MAX_ATTEMPTS, webhookRetryDelayMs } from '../../src/domain/webhook-backoff.js';
import { newId } from '../../src/domain/ids.js';
import type { MailStore } from '../../src/ports/mail-store.js';
import { WEBHOOK_ATTEMPTS_KEPT, webhookStoreOf, type ClaimedDelivery, type WebhookStore } from '../../src/ports/webhook-store.js';
import { addInbox, at, deliver, makeMail, openPolicy, SETUP_TIME, storedIds } from './mail-store-fixtures.js';

/** A lease long enough that no test's claim runs out by itself. */
const LEASE_MS = 60_000;
/** Far in the future: every owed delivery is due then. */
const LATER = at(10_000_000);

/**
 * The one contract every WebhookStore passes, on the MailStore that carries it: the outbox is
 * written with the message or not at all, claims are exclusive, attempts are recorded by the
 * claim that holds the lease, and an inbox takes its webhook state with it when it goes.
 */
export function runWebhookStoreContract(name: string, makeStore: () => Promise<MailStore>): void {
  describe(`WebhookStore contract: ${name}`, () => {
    let current: MailStore | undefined;
    const store = (): MailStore => {
      if (current === undefined) throw new Error('no store: beforeEach did not run');
      return current;
    };
    const hooks = (): WebhookStore => {
      const found = webhookStoreOf(store());
      if (found === undefined) throw new Error('the store carries no WebhookStore');
      return found;
    };
    const hook = async (inboxId: string, url = 'https://hooks.example.org/in') => {
      expect(await hooks().setWebhook({ inboxId, url, secret: 'whsec_0123456789abcdef', createdAt: at(0) })).toBe(true);
    };
    const owed = (): Promise<ClaimedDelivery[]> => hooks().claimDue(LATER, 1000, LEASE_MS);

    beforeEach(async () => {
      current = await makeStore();
      await current.migrate();
    });
    afterEach(async () => {
      await current?.close();
      current = undefined;
    });

    it('sets, reads, replaces and deletes an inbox\'s webhook; none for an inbox not stored', async () => {
      const inbox = await addInbox(store());
      expect(await hooks().findWebhook(inbox.id)).toBeNull();
      await hook(inbox.id);
      expect(await hooks().findWebhook(inbox.id)).toEqual({ inboxId: inbox.id, url: 'https://hooks.example.org/in', secret: 'whsec_0123456789abcdef', createdAt: at(0) });
      expect(await hooks().setWebhook({ inboxId: inbox.id, url: 'https://other.example.org/', secret: 'whsec_ffffffffffffffff', createdAt: at(5) })).toBe(true);
      expect(await hooks().findWebhook(inbox.id)).toMatchObject({ url: 'https://other.example.org/', secret: 'whsec_ffffffffffffffff', createdAt: at(5) });
      expect(await hooks().deleteWebhook(inbox.id)).toBe(true);
      expect(await hooks().deleteWebhook(inbox.id)).toBe(false);
      expect(await hooks().findWebhook(inbox.id)).toBeNull();
      expect(await hooks().setWebhook({ inboxId: newId(), url: 'https://x.example/', secret: 'whsec_0123456789abcdef', createdAt: at(0) })).toBe(false);
    });

    it('owes one delivery per copy stored in an inbox with a webhook, and none elsewhere', async () => {
      const hooked = await addInbox(store());
      const plain = await addInbox(store());
      await hook(hooked.id);
      const ids = await deliver(store(), [hooked.id, plain.id]);
      const claimed = await owed();
      expect(claimed).toHaveLength(1);
      expect(claimed[0]).toMatchObject({
        inboxId: hooked.id,
        messageId: ids.get(hooked.id),
        event: 'message.received',
        attempt: 1,
        url: 'https://hooks.example.org/in',
        secret: 'whsec_0123456789abcdef',
        address: `${hooked.username}@${hooked.domain}`,
      });
    });

    it('owes nothing for a copy that was not stored (inbox full, expired or missing)', async () => {
      const full = await addInbox(store());
      const expired = await addInbox(store(), { expiresAt: at(1) });
      await hook(full.id);
      await hook(expired.id);
      const quota = { maxMessages: 0, maxBytes: 1_000_000 };
      const outcomes = await store().insertMessage(makeMail(), [full.id, expired.id, newId()], openPolicy(at(2), { free: quota, premium: quota }));
      expect(storedIds(outcomes).size).toBe(0);
      expect(await owed()).toEqual([]);
    });

    it('claims each due delivery for one caller only, among concurrent claimers', async () => {
      const inboxes = await Promise.all(Array.from({ length: 4 }, () => addInbox(store())));
      for (const inbox of inboxes) await hook(inbox.id);
      for (let i = 0; i < 10; i += 1) await deliver(store(), inboxes.map((inbox) => inbox.id));
      const claims = await Promise.all(Array.from({ length: 8 }, () => hooks().claimDue(LATER, 7, LEASE_MS)));
      const ids = claims.flat().map((delivery) => delivery.id);
      expect(ids).toHaveLength(40);
      expect(new Set(ids).size).toBe(40);
      expect(await owed()).toEqual([]);
    });

    it('gives a claim back when its lease runs out, and refuses the stale claim\'s record', async () => {
      const inbox = await addInbox(store());
      await hook(inbox.id);
      await deliver(store(), [inbox.id]);
      const [first] = await hooks().claimDue(at(0), 10, LEASE_MS);
      expect(first).toBeDefined();
      expect(await hooks().claimDue(new Date(at(0).getTime() + LEASE_MS - 1), 10, LEASE_MS)).toEqual([]);
      const [again] = await hooks().claimDue(new Date(at(0).getTime() + LEASE_MS), 10, LEASE_MS);
      expect(again).toMatchObject({ id: first?.id, attempt: 1 });
      expect(again?.leaseToken).not.toBe(first?.leaseToken);
      const record = { deliveryId: first?.id ?? '', attempt: 1, status: 200, error: null, at: at(2), nextAt: null };
      expect(await hooks().recordAttempt({ ...record, leaseToken: first?.leaseToken ?? '' })).toBe(false);
      expect(await hooks().recordAttempt({ ...record, leaseToken: again?.leaseToken ?? '' })).toBe(true);
      expect(await hooks().listAttempts(inbox.id, 20)).toHaveLength(1);
      expect(await owed()).toEqual([]);
    });

    it('gives back a released claim at once to any caller, and leaves a claim taken over as it is', async () => {
      const inbox = await addInbox(store());
      await hook(inbox.id);
      await deliver(store(), [inbox.id]);
      const [first] = await hooks().claimDue(at(0), 10, LEASE_MS);
      expect(first).toBeDefined();
      const claim = { id: first?.id ?? '', leaseToken: first?.leaseToken ?? '' };
      // A second into a lease of a minute.
      const soon = new Date(at(0).getTime() + 1000);
      const later = new Date(soon.getTime() + 1000);
      expect(await hooks().releaseClaims([claim], soon)).toBe(1);
      // Due at the release, not a lease later; and the released claim records nothing.
      expect(await hooks().claimDue(new Date(soon.getTime() - 1), 10, LEASE_MS)).toEqual([]);
      const [again] = await hooks().claimDue(soon, 10, LEASE_MS);
      expect(again).toMatchObject({ id: first?.id, attempt: 1 });
      expect(await hooks().recordAttempt({ deliveryId: claim.id, leaseToken: claim.leaseToken, attempt: 1, status: 200, error: null, at: later, nextAt: null })).toBe(false);
      // The old claim cannot give back the new one.
      expect(await hooks().releaseClaims([claim], later)).toBe(0);
      expect(await hooks().claimDue(later, 10, LEASE_MS)).toEqual([]);
      expect(await hooks().releaseClaims([], later)).toBe(0);
    });

    it('follows the backoff schedule and gives up after the sixth attempt', async () => {
      const inbox = await addInbox(store());
      await hook(inbox.id);
      const messageId = (await deliver(store(), [inbox.id])).get(inbox.id);
      // Owed from the moment the message was stored (deliver() stores at SETUP_TIME).
      let now = SETUP_TIME.getTime();
      const dueTimes: number[] = [];
      for (let attempt = 1; attempt <= WEBHOOK_MAX_ATTEMPTS; attempt += 1) {
        // Not due a millisecond early.
        expect(await hooks().claimDue(new Date(now - 1), 10, LEASE_MS)).toEqual([]);
        const [claimed] = await hooks().claimDue(new Date(now), 10, LEASE_MS);
        expect(claimed).toMatchObject({ attempt, messageId });
        const ended = now + 500;
        const delay = webhookRetryDelayMs(attempt, 10, () => 0.5);
        const nextAt = delay === null ? null : new Date(ended + delay);
        expect(await hooks().recordAttempt({ deliveryId: claimed?.id ?? '', leaseToken: claimed?.leaseToken ?? '', attempt, status: 500, error: null, at: new Date(ended), nextAt })).toBe(true);
        if (nextAt !== null) {
          dueTimes.push(nextAt.getTime() - ended);
          now = nextAt.getTime();
        }
      }
      expect(dueTimes).toEqual([10_000, 60_000, 300_000, 1_800_000, 7_200_000]);
      expect(await owed()).toEqual([]);
      const attempts = await hooks().listAttempts(inbox.id, 20);
      expect(attempts.map((a) => a.attempt)).toEqual([6, 5, 4, 3, 2, 1]);
      expect(attempts[0]).toMatchObject({ messageId, status: 500, error: null });
    });

    it('keeps the last attempts of an inbox only, newest first', async () => {
      const inbox = await addInbox(store());
      await hook(inbox.id);
      for (let i = 0; i < WEBHOOK_ATTEMPTS_KEPT + 5; i += 1) {
        await deliver(store(), [inbox.id]);
        const [claimed] = await hooks().claimDue(LATER, 1, LEASE_MS);
        await hooks().recordAttempt({ deliveryId: claimed?.id ?? '', leaseToken: claimed?.leaseToken ?? '', attempt: 1, status: 200 + i, error: null, at: at(i), nextAt: null });
      }
      const attempts = await hooks().listAttempts(inbox.id, 100);
      expect(attempts).toHaveLength(WEBHOOK_ATTEMPTS_KEPT);
      expect(attempts[0]?.status).toBe(200 + WEBHOOK_ATTEMPTS_KEPT + 4);
      expect(attempts.at(-1)?.status).toBe(205);
      expect(await hooks().listAttempts(inbox.id, 3)).toHaveLength(3);
    });

    it('sends what the old webhook owed to the new URL after a replacement', async () => {
      const inbox = await addInbox(store());
      await hook(inbox.id, 'https://old.example.org/');
      await deliver(store(), [inbox.id]);
      await hook(inbox.id, 'https://new.example.org/');
      expect((await owed()).map((delivery) => delivery.url)).toEqual(['https://new.example.org/']);
    });

    it('owes a test delivery only to an inbox with a webhook', async () => {
      const inbox = await addInbox(store());
      expect(await hooks().enqueueTest(inbox.id, newId(), at(0))).toBe(false);
      await hook(inbox.id);
      const id = newId();
      expect(await hooks().enqueueTest(inbox.id, id, at(0))).toBe(true);
      expect(await owed()).toEqual([expect.objectContaining({ id, event: 'message.test', messageId: null, attempt: 1 })]);
    });

    it('drops the webhook and what it owes with the webhook\'s deletion, the inbox\'s deletion and its expiry', async () => {
      const [a, b, c] = await Promise.all([addInbox(store()), addInbox(store()), addInbox(store(), { expiresAt: at(5) })]);
      for (const inbox of [a, b, c]) if (inbox !== undefined) await hook(inbox.id);
      await deliver(store(), [a?.id ?? '', b?.id ?? '', c?.id ?? '']);
      // One attempt recorded for b, so that its history goes too.
      const [first] = (await owed()).filter((delivery) => delivery.inboxId === b?.id);
      await hooks().recordAttempt({ deliveryId: first?.id ?? '', leaseToken: first?.leaseToken ?? '', attempt: 1, status: 500, error: null, at: at(1), nextAt: at(2) });
      expect(await hooks().deleteWebhook(a?.id ?? '')).toBe(true);
      expect(await store().deleteInbox(b?.id ?? '')).toBe(true);
      expect(await store().deleteExpired(at(10), 10)).toMatchObject({ inboxes: 1 });
      expect(await owed()).toEqual([]);
      expect(await hooks().listAttempts(b?.id ?? '', 20)).toEqual([]);
      for (const inbox of [b, c]) expect(await hooks().findWebhook(inbox?.id ?? '')).toBeNull();
      expect(await hooks().enqueueTest(c?.id ?? '', newId(), at(20))).toBe(false);
    });

    it('records nothing for a claim whose inbox was deleted meanwhile', async () => {
      const inbox = await addInbox(store());
      await hook(inbox.id);
      await deliver(store(), [inbox.id]);
      const [claimed] = await owed();
      await store().deleteInbox(inbox.id);
      expect(await hooks().recordAttempt({ deliveryId: claimed?.id ?? '', leaseToken: claimed?.leaseToken ?? '', attempt: 1, status: 200, error: null, at: at(1), nextAt: null })).toBe(false);
    });
  });
}
