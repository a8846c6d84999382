import { describe, expect, it } from 'vitest';
import {
  addInbox,
  allByteValues,
  at,
  deliver,
  deliverOne,
  expectBytes,
  rangedAttachments,
  makeAttachment,
  makeMail,
  randomContent,
  type StoreGetter,
  openPolicy,
  SETUP_TIME,
  storedIds,
} from './mail-store-fixtures.js';
import { countMessages, listMessages } from '../helpers/store-reads.js';

/** Messages: fan-out to several inboxes, views, since/limit, byte-exact raw and attachments, deletion. */
export function describeMessageContract(store: StoreGetter): void {
  describe('messages', () => {
    it('lists a stored message with every field of the view', async () => {
      const inbox = await addInbox(store());
      const raw = new TextEncoder().encode('Subject: Grüße ✉\r\n\r\nhallo\r\n');
      const mail = makeMail({
        from: '"Ann" <ann@example.org>',
        to: 'Bob <bob@tempinbox.test>',
        subject: 'Grüße ✉ 🎉',
        text: 'hallo 🎉\nzweite Zeile',
        html: '<p>hallo</p>',
        raw,
        receivedAt: at(7),
        attachments: [makeAttachment(new Uint8Array([9, 8, 7]), 'a.pdf', 'application/pdf'), makeAttachment(new Uint8Array(0), 'empty.txt', 'text/plain')],
      });
      const ids = storedIds(await store().insertMessage(mail, [inbox.id], openPolicy(SETUP_TIME)));
      const id = ids.get(inbox.id) ?? '';
      expect(id).toMatch(/^[A-Za-z0-9_-]{22}$/);

      const [view, ...rest] = await listMessages(store(), inbox.id);
      expect(rest).toEqual([]);
      expect(view).toEqual({
        id,
        inboxId: inbox.id,
        from: '"Ann" <ann@example.org>',
        to: 'Bob <bob@tempinbox.test>',
        // No envelope address given: the inbox's own address.
        recipient: `${inbox.username}@${inbox.domain}`,
        subject: 'Grüße ✉ 🎉',
        text: 'hallo 🎉\nzweite Zeile',
        html: '<p>hallo</p>',
        receivedAt: at(7),
        size: raw.byteLength,
        attachments: [
          { id: expect.any(String), filename: 'a.pdf', contentType: 'application/pdf', size: 3 },
          { id: expect.any(String), filename: 'empty.txt', contentType: 'text/plain', size: 0 },
        ],
        truncated: false,
        codes: [],
        links: [],
        auth: null,
      });
    });

    it('reads an attachment kept as a range of the raw message back exactly, for every copy', async () => {
      const a = await addInbox(store());
      const b = await addInbox(store());
      const { raw, attachments, file } = rangedAttachments();
      const ids = await deliver(store(), [a.id, b.id], { raw, attachments });
      for (const inbox of [a, b]) {
        const id = ids.get(inbox.id) ?? '';
        const view = await store().findMessage(id);
        expect(view?.attachments.map((attachment) => [attachment.filename, attachment.size])).toEqual([['f.bin', 512], ['h.txt', 6], ['whole.bin', 3]]);
        const read = await Promise.all((view?.attachments ?? []).map((attachment) => store().findAttachment(id, attachment.id)));
        expectBytes(read[0]?.content, file);
        expect(new TextDecoder().decode(read[1]?.content)).toBe('héllo');
        expectBytes(read[2]?.content, new Uint8Array([1, 2, 3]));
      }
    });

    it('falls back to the envelope sender and the inbox address when the headers are absent', async () => {
      const a = await addInbox(store(), { domain: 'a.test' });
      const b = await addInbox(store(), { domain: 'b.test' });
      const ids = await deliver(store(), [a.id, b.id], { from: '', to: '', envelopeFrom: 'env@example.org', html: null });
      const viewA = await store().findMessage(ids.get(a.id) ?? '');
      const [viewB] = await listMessages(store(), b.id);
      expect(viewA?.from).toBe('env@example.org');
      expect(viewA?.to).toBe(`${a.username}@a.test`);
      expect(viewA?.html).toBeNull();
      expect(viewB?.to).toBe(`${b.username}@b.test`);
    });

    it('stores one message for several inboxes: a copy each, with its own id, sharing attachments', async () => {
      const a = await addInbox(store());
      const b = await addInbox(store());
      const c = await addInbox(store());
      const ids = await deliver(store(), [a.id, b.id, c.id], { attachments: [makeAttachment(allByteValues())] });
      expect([...ids.keys()]).toEqual([a.id, b.id, c.id]);
      expect(new Set(ids.values()).size).toBe(3);
      for (const inbox of [a, b, c]) {
        const [view] = await listMessages(store(), inbox.id);
        expect(view?.id).toBe(ids.get(inbox.id));
        expect(view?.inboxId).toBe(inbox.id);
        expect(await countMessages(store(), inbox.id)).toBe(1);
        const attachment = await store().findAttachment(view?.id ?? '', view?.attachments[0]?.id ?? '');
        expect(attachment?.inboxId).toBe(inbox.id);
        expect(attachment?.messageId).toBe(view?.id);
      }
      const attachmentIds = await Promise.all([a, b, c].map(async (i) => (await listMessages(store(), i.id))[0]?.attachments[0]?.id));
      expect(new Set(attachmentIds).size).toBe(1);
    });

    it('skips inboxes that do not exist and stores one copy per inbox', async () => {
      const a = await addInbox(store());
      const ids = await deliver(store(), ['missing-1', a.id, a.id, 'missing-2']);
      expect([...ids.keys()]).toEqual([a.id]);
      expect(await countMessages(store(), a.id)).toBe(1);
      expect(await deliver(store(), ['missing-1', 'missing-2'])).toEqual(new Map());
      expect(await deliver(store(), [])).toEqual(new Map());
    });

    it('lists newest first, by arrival even when receive times are equal', async () => {
      const inbox = await addInbox(store());
      const first = await deliverOne(store(), inbox.id, { receivedAt: at(1) });
      const second = await deliverOne(store(), inbox.id, { receivedAt: at(1) });
      const third = await deliverOne(store(), inbox.id, { receivedAt: at(2) });
      expect((await listMessages(store(), inbox.id)).map((m) => m.id)).toEqual([third, second, first]);
      expect(await countMessages(store(), inbox.id)).toBe(3);
      expect(await countMessages(store(), 'missing')).toBe(0);
      expect(await listMessages(store(), 'missing')).toEqual([]);
    });

    it('sinceId returns only later messages; an id that is not of this inbox is ignored', async () => {
      const inbox = await addInbox(store());
      const other = await addInbox(store());
      const m1 = await deliverOne(store(), inbox.id);
      const foreign = await deliverOne(store(), other.id);
      const m2 = await deliverOne(store(), inbox.id);
      const m3 = await deliverOne(store(), inbox.id);
      const list = async (sinceId?: string, limit?: number) =>
        (await listMessages(store(), inbox.id, { sinceId, limit })).map((m) => m.id);

      expect(await list(m1)).toEqual([m3, m2]);
      expect(await list(m2)).toEqual([m3]);
      expect(await list(m3)).toEqual([]);
      expect(await list('unknown-id')).toEqual([m3, m2, m1]);
      expect(await list(foreign)).toEqual([m3, m2, m1]);
      expect(await list(undefined, 2)).toEqual([m3, m2]);
      expect(await list(m1, 1)).toEqual([m3]);
      expect(await list(undefined, 0)).toEqual([]);
      expect(await list(undefined, 10)).toEqual([m3, m2, m1]);
    });

    it('a poll since the newest message seen misses nothing delivered concurrently', async () => {
      // Several nodes deliver to one inbox at once. If a later-numbered message could commit
      // before an earlier one, a poller that saw the later one and asks `since` it would never
      // see the earlier one (on PostgreSQL without per-inbox serialisation of inserts).
      const inbox = await addInbox(store());
      const total = 80;
      const seen = new Set<string>();
      let newest: string | undefined;
      const poll = async () => {
        const page = await listMessages(store(), inbox.id, newest === undefined ? {} : { sinceId: newest });
        for (const message of page) seen.add(message.id);
        newest = page[0]?.id ?? newest;
      };
      let writing = true;
      const delivered = Promise.all(Array.from({ length: total }, (_, i) => deliverOne(store(), inbox.id, { subject: `m${i}` }))).finally(
        () => (writing = false),
      );
      // Bounded: the deliveries end, and every poll is one query.
      for (let round = 0; writing && round < 10_000; round += 1) await poll();
      const ids = await delivered;
      await poll();
      expect(ids.filter((id) => !seen.has(id))).toEqual([]);
      expect(seen.size).toBe(total);
    });

    it('a sinceId whose message was deleted is ignored', async () => {
      const inbox = await addInbox(store());
      const m1 = await deliverOne(store(), inbox.id);
      const m2 = await deliverOne(store(), inbox.id);
      await store().deleteMessage(m1);
      expect((await listMessages(store(), inbox.id, { sinceId: m1 })).map((m) => m.id)).toEqual([m2]);
    });

    it('pages attachments to the right messages', async () => {
      const inbox = await addInbox(store());
      const plain = await deliverOne(store(), inbox.id);
      const one = await deliverOne(store(), inbox.id, { attachments: [makeAttachment(new Uint8Array([1]), 'one')] });
      const two = await deliverOne(store(), inbox.id, {
        attachments: [makeAttachment(new Uint8Array([2]), 'two-a'), makeAttachment(new Uint8Array([2, 2]), 'two-b')],
      });
      const names = async (options?: { sinceId?: string; limit?: number }) =>
        (await listMessages(store(), inbox.id, options)).map((m) => [m.id, m.attachments.map((a) => a.filename)]);
      expect(await names()).toEqual([[two, ['two-a', 'two-b']], [one, ['one']], [plain, []]]);
      expect(await names({ limit: 1 })).toEqual([[two, ['two-a', 'two-b']]]);
      expect(await names({ sinceId: plain, limit: 5 })).toEqual([[two, ['two-a', 'two-b']], [one, ['one']]]);
    });

    it('findMessage returns the detail with envelope sender and headers in order', async () => {
      const inbox = await addInbox(store());
      const headers = [
        { name: 'received', value: 'from a by b' },
        { name: 'subject', value: 'Hi' },
        { name: 'received', value: 'from c by d' },
      ];
      const id = await deliverOne(store(), inbox.id, { envelopeFrom: 'env@example.org', headers, subject: 'Hi', messageId: null });
      const detail = await store().findMessage(id);
      expect(detail?.envelopeFrom).toBe('env@example.org');
      expect(detail?.headers).toEqual(headers);
      expect(detail?.subject).toBe('Hi');
      expect(detail?.inboxId).toBe(inbox.id);
      expect(await store().findMessage('missing')).toBeNull();
    });

    it('keeps the raw message byte-exact, binary and 8-bit included', async () => {
      const inbox = await addInbox(store());
      const raw = new Uint8Array([...new TextEncoder().encode('Subject: x\r\n\r\n'), ...allByteValues(), 0x0d, 0x0a]);
      const id = await deliverOne(store(), inbox.id, { raw });
      const found = await store().findRawMessage(id);
      expect(found?.inboxId).toBe(inbox.id);
      expectBytes(found?.raw, raw);
      expect((await store().findMessage(id))?.size).toBe(raw.byteLength);
      expect(await store().findRawMessage('missing')).toBeNull();
    });

    it('keeps attachments byte-exact and in order: every byte value, a large random one, an empty one', async () => {
      const inbox = await addInbox(store());
      const contents = [allByteValues(), randomContent(1024 * 1024 + 7), new Uint8Array(0)];
      const id = await deliverOne(store(), inbox.id, {
        attachments: contents.map((c, i) => makeAttachment(c, `f${i}.bin`, 'application/octet-stream')),
      });
      const infos = (await store().findMessage(id))?.attachments ?? [];
      expect(infos.map((a) => [a.filename, a.size])).toEqual(contents.map((c, i) => [`f${i}.bin`, c.byteLength]));
      for (const [i, info] of infos.entries()) {
        const found = await store().findAttachment(id, info.id);
        expect(found).toMatchObject({ id: info.id, filename: `f${i}.bin`, contentType: 'application/octet-stream', size: contents[i]?.byteLength, messageId: id, inboxId: inbox.id });
        expectBytes(found?.content, contents[i] ?? new Uint8Array(0));
      }
    });

    it("findAttachment answers only for the message's own attachments", async () => {
      const inbox = await addInbox(store());
      const first = await deliverOne(store(), inbox.id, { attachments: [makeAttachment(new Uint8Array([1]))] });
      const second = await deliverOne(store(), inbox.id, { attachments: [makeAttachment(new Uint8Array([2]))] });
      const firstAttachment = (await store().findMessage(first))?.attachments[0]?.id ?? '';
      expect(await store().findAttachment(first, firstAttachment)).not.toBeNull();
      expect(await store().findAttachment(second, firstAttachment)).toBeNull();
      expect(await store().findAttachment('missing', firstAttachment)).toBeNull();
      expect(await store().findAttachment(first, 'missing')).toBeNull();
    });

    it('deleteMessage deletes one copy; the last copy takes the content and attachments with it', async () => {
      const a = await addInbox(store());
      const b = await addInbox(store());
      const content = randomContent(4096);
      const ids = await deliver(store(), [a.id, b.id], { attachments: [makeAttachment(content)] });
      const later = await deliverOne(store(), a.id);
      const copyA = ids.get(a.id) ?? '';
      const copyB = ids.get(b.id) ?? '';
      const attachmentId = (await store().findMessage(copyA))?.attachments[0]?.id ?? '';

      expect(await store().deleteMessage(copyA)).toBe(true);
      expect(await store().deleteMessage(copyA)).toBe(false);
      expect((await listMessages(store(), a.id)).map((m) => m.id)).toEqual([later]);
      expect(await countMessages(store(), a.id)).toBe(1);
      expect(await store().findMessage(copyA)).toBeNull();
      expect(await store().findAttachment(copyA, attachmentId)).toBeNull();
      expectBytes((await store().findAttachment(copyB, attachmentId))?.content, content);

      expect(await store().deleteMessage(copyB)).toBe(true);
      expect(await store().findAttachment(copyB, attachmentId)).toBeNull();
      expect(await store().findRawMessage(copyB)).toBeNull();
      expect(await store().deleteMessage('missing')).toBe(false);
    });

    it('callers cannot change stored mail through the arrays and bytes they passed or got', async () => {
      const inbox = await addInbox(store());
      const raw = new Uint8Array([65, 66, 67]);
      const content = new Uint8Array([1, 2, 3]);
      const mail = makeMail({ raw, attachments: [makeAttachment(content)] });
      const id = storedIds(await store().insertMessage(mail, [inbox.id], openPolicy(SETUP_TIME))).get(inbox.id) ?? '';
      raw.fill(0);
      content.fill(0);
      mail.parsed.headers.push({ name: 'x-added', value: 'later' });

      const found = await store().findRawMessage(id);
      found?.raw.fill(7);
      const view = await store().findMessage(id);
      view?.attachments.pop();
      view?.headers.pop();
      const attachmentId = (await store().findMessage(id))?.attachments[0]?.id ?? '';
      (await store().findAttachment(id, attachmentId))?.content.fill(9);

      expectBytes((await store().findRawMessage(id))?.raw, new Uint8Array([65, 66, 67]));
      expectBytes((await store().findAttachment(id, attachmentId))?.content, new Uint8Array([1, 2, 3]));
      const again = await store().findMessage(id);
      expect(again?.attachments).toHaveLength(1);
      expect(again?.headers).toEqual([{ name: 'subject', value: 'Hello' }]);
    });
  });
}
