import { describe, expect, it } from 'vitest';
import type { SenderAuth } from '../../src/domain/sender-auth.js';
import { addInbox, deliver, deliverOne, type StoreGetter } from './mail-store-fixtures.js';
import { listMessages } from '../helpers/store-reads.js';

const AUTH: SenderAuth = {
  spf: { result: 'softfail', domain: 'example.org' },
  dkim: [
    { result: 'pass', domain: 'example.org', selector: 's1' },
    { result: 'fail', domain: 'mailer.example', selector: 'k2' },
  ],
  dmarc: { result: 'pass', domain: 'example.org', policy: 'reject' },
  arc: { result: 'none' },
};

/** What a message tells (codes, links, auth): stored with the message, the same for every copy and every read. */
export function describeInsightsContract(store: StoreGetter): void {
  describe('message insights', () => {
    it('keeps codes, links and auth with the message, in listings and in the detail, for every copy', async () => {
      const a = await addInbox(store());
      const b = await addInbox(store());
      const links = [
        { url: 'https://example.org/verify?t=1', text: 'Verify ✓' },
        { url: 'http://example.org/', text: '' },
      ];
      const ids = await deliver(store(), [a.id, b.id], { codes: ['482913', 'G-7Q9'], links, auth: AUTH });
      for (const [inboxId, id] of ids) {
        const [listed] = await listMessages(store(), inboxId);
        expect(listed).toMatchObject({ id, codes: ['482913', 'G-7Q9'], links, auth: AUTH });
        expect(await store().findMessage(id)).toMatchObject({ codes: ['482913', 'G-7Q9'], links, auth: AUTH });
      }
    });

    it('a message stored without a check has auth null, and none of its fields leak into another message', async () => {
      const inbox = await addInbox(store());
      await deliverOne(store(), inbox.id, { codes: ['111222'], auth: AUTH });
      const id = await deliverOne(store(), inbox.id, { auth: null });
      const detail = await store().findMessage(id);
      expect(detail).toMatchObject({ codes: [], links: [], auth: null });
    });

    it('callers cannot change stored insights through the objects they passed or got', async () => {
      const inbox = await addInbox(store());
      const auth = structuredClone(AUTH);
      const codes = ['482913'];
      const id = await deliverOne(store(), inbox.id, { codes, auth });
      codes.push('999999');
      auth.dkim.length = 0;
      const got = await store().findMessage(id);
      got?.codes.push('000000');
      got?.auth?.dkim.push({ result: 'none', domain: 'x', selector: 'y' });
      expect(await store().findMessage(id)).toMatchObject({ codes: ['482913'], auth: AUTH });
    });

    it('deleting the last copy deletes its insights too (the content can go)', async () => {
      const inbox = await addInbox(store());
      const id = await deliverOne(store(), inbox.id, { codes: ['123456'], auth: AUTH });
      expect(await store().deleteMessage(id)).toBe(true);
      expect(await store().findMessage(id)).toBeNull();
      // The inbox's other paths to the content (deleteInbox) must not trip over the insights row either.
      await deliverOne(store(), inbox.id, { codes: ['654321'], auth: AUTH });
      expect(await store().deleteInbox(inbox.id)).toBe(true);
    });
  });
}
