import { describe, expect, it } from 'vitest';
import { codeOf, serviceFixture } from '../../test/helpers/service-fixture.js';
import { MAX_RECIPIENTS_PER_MESSAGE } from './delivery-service.js';
import { countMessages, listMessages } from '../../test/helpers/store-reads.js';

describe('DeliveryService', () => {
  it('decides recipients: relay, unknown, plus-addressing, case, caps', async () => {
    const f = serviceFixture({ plan: { freeMaxMessages: 2 } });
    const { session } = await f.newSession();
    const { inbox } = await f.inboxes.create(session, {}, 'ip');
    expect(await codeOf(f.delivery.acceptRecipient('x@elsewhere.example', 0))).toBe('invalid_domain');
    expect(await codeOf(f.delivery.acceptRecipient('nobody123@tempinbox.test', 0))).toBe('inbox_not_found');
    expect(await codeOf(f.delivery.acceptRecipient(`${inbox.username}@other.test`, 0))).toBe('inbox_not_found');
    expect((await f.delivery.acceptRecipient(`${inbox.username.toUpperCase()}+tag@TempInbox.Test`, 0)).inboxId).toBe(inbox.id);
    expect(await codeOf(f.delivery.acceptRecipient(`${inbox.username}@tempinbox.test`, MAX_RECIPIENTS_PER_MESSAGE))).toBe('too_many_recipients');
    await f.send(`${inbox.username}@tempinbox.test`);
    await f.send(`${inbox.username}@tempinbox.test`);
    expect(await codeOf(f.delivery.acceptRecipient(`${inbox.username}@tempinbox.test`, 0))).toBe('inbox_full');
  });

  it('always accepts postmaster, with or without a served domain', async () => {
    const f = serviceFixture();
    expect(await f.delivery.acceptRecipient('Postmaster@other.test', 0)).toMatchObject({ inboxId: null });
    expect(await f.delivery.acceptRecipient('postmaster', 0)).toMatchObject({ inboxId: null });
  });

  it('stores one copy per inbox for a message to several of our inboxes', async () => {
    const f = serviceFixture();
    const a = await f.inboxes.create((await f.newSession()).session, {}, 'ip');
    const b = await f.inboxes.create((await f.newSession()).session, {}, 'ip');
    const recipients = [
      await f.delivery.acceptRecipient(`${a.inbox.username}@tempinbox.test`, 0),
      await f.delivery.acceptRecipient(`${a.inbox.username}+again@tempinbox.test`, 1),
      await f.delivery.acceptRecipient(`${b.inbox.username}@tempinbox.test`, 2),
    ];
    const result = await f.delivery.deliver('s@example.org', recipients, Buffer.from('subject\nbody'));
    expect(result.delivered).toBe(2);
    expect(await countMessages(f.store, a.inbox.id)).toBe(1);
    expect(await countMessages(f.store, b.inbox.id)).toBe(1);
  });

  it('keeps the postmaster inbox to its newest PREMIUM_MAX_MESSAGES messages', async () => {
    const f = serviceFixture({ plan: { premiumMaxMessages: 3 } });
    for (let i = 1; i <= 5; i += 1) await f.send('postmaster@tempinbox.test', `report ${i}`);
    const id = await f.delivery.postmasterInboxId();
    const kept = await listMessages(f.store, id);
    expect(kept.map((m) => m.subject)).toEqual(['report 5', 'report 4', 'report 3']);
  });

  it('answers every recipient storage_full (452 4.3.1) while the disk has no room, and recovers with it', async () => {
    let room = false;
    const f = serviceFixture({ capacity: { hasRoom: () => Promise.resolve(room) } });
    const { inbox } = await f.inboxes.create((await f.newSession()).session, {}, 'ip');
    for (const address of [`${inbox.username}@tempinbox.test`, 'postmaster@tempinbox.test', 'x@elsewhere.example']) {
      expect(await codeOf(f.delivery.acceptRecipient(address, 0)), address).toBe('storage_full');
    }
    room = true;
    expect((await f.delivery.acceptRecipient(`${inbox.username}@tempinbox.test`, 0)).inboxId).toBe(inbox.id);
  });

  it('renames an Authentication-Results field that came under a served domain, with no checks configured (MAIL_AUTH=off)', async () => {
    const f = serviceFixture();
    const { inbox } = await f.inboxes.create((await f.newSession()).session, {}, 'ip');
    const recipient = await f.delivery.acceptRecipient(`${inbox.username}@tempinbox.test`, 0);
    const received = 'Authentication-Results: other.test; dmarc=pass\r\nAuthentication-Results: mx.example; spf=pass\r\nSubject: hi\r\n\r\nbody\r\n';
    const trace = Buffer.from('Received: from x by tempinbox.test\r\n');
    const { messageIds } = await f.delivery.deliver('s@example.org', [recipient], Buffer.from(received), { trace, clientAddress: '192.0.2.1', helo: 'x' });
    const stored = await f.store.findRawMessage(messageIds[0] ?? '');
    expect(Buffer.from(stored?.raw ?? []).toString()).toBe(`${trace.toString()}X-Original-${received}`);
    // Without an SMTP transaction (a message handed over as stored bytes) nothing is touched.
    const { messageIds: [plain = ''] } = await f.delivery.deliver('s@example.org', [recipient], Buffer.from(received));
    expect(Buffer.from((await f.store.findRawMessage(plain))?.raw ?? []).toString()).toBe(received);
  });
});
