import { describe, expect, it } from 'vitest';
import { codeOf, serviceFixture } from '../../test/helpers/service-fixture.js';
import { CHECK_BUDGET_BYTES, CHECK_FIELD_BYTES, CHECK_READ_BATCH } from '../domain/check-limits.js';
import type { MessageView } from '../domain/types.js';

/** A free inbox with `count` messages s0…s(count-1), each with a body of `bodyBytes`. */
async function filledInbox(count: number, bodyBytes = 4) {
  const f = serviceFixture();
  const { session } = await f.newSession();
  const { inbox } = await f.inboxes.create(session, {}, 'ip');
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) ids.push(await f.send(`${inbox.username}@tempinbox.test`, `s${i}`, 'b'.repeat(bodyBytes)));
  return { f, session, username: inbox.username, newestFirst: ids.reverse() };
}

const jsonBytes = (m: MessageView) => Buffer.byteLength(JSON.stringify(m));

describe('check pages', () => {
  it('answers at most limit messages, then has_more; before gives the next page', async () => {
    const { f, session, username, newestFirst } = await filledInbox(2 * CHECK_READ_BATCH + 3);
    const first = await f.checkPage(session, username, { limit: 7 }, jsonBytes);
    expect(first.messages.map((m) => m.id)).toEqual(newestFirst.slice(0, 7));
    expect(first.hasMore).toBe(true);
    const next = await f.checkPage(session, username, { limit: 100, beforeId: newestFirst[6] }, jsonBytes);
    expect(next.messages.map((m) => m.id)).toEqual(newestFirst.slice(7));
    expect(next.hasMore).toBe(false);
    // Exactly the rest: no more beyond it.
    const exact = await f.checkPage(session, username, { limit: newestFirst.length }, jsonBytes);
    expect(exact).toMatchObject({ hasMore: false });
    expect(exact.messages).toHaveLength(newestFirst.length);
    // since and before together: the window between them.
    const window = await f.checkPage(session, username, { limit: 100, sinceId: newestFirst[5], beforeId: newestFirst[1] }, jsonBytes);
    expect(window.messages.map((m) => m.id)).toEqual(newestFirst.slice(2, 5));
    expect(window.hasMore).toBe(false);
  });

  it('stops at the byte budget, always answers one message, and says has_more', async () => {
    const { f, session, username, newestFirst } = await filledInbox(12);
    const quarter = () => CHECK_BUDGET_BYTES / 4;
    const page = await f.checkPage(session, username, { limit: 100 }, quarter);
    // 1 KiB of envelope room: three quarters fit, the fourth does not.
    expect(page.messages.map((m) => m.id)).toEqual(newestFirst.slice(0, 3));
    expect(page.hasMore).toBe(true);
    const huge = await f.checkPage(session, username, { limit: 100 }, () => 2 * CHECK_BUDGET_BYTES);
    expect(huge.messages.map((m) => m.id)).toEqual(newestFirst.slice(0, 1));
    expect(huge.hasMore).toBe(true);
    const one = await filledInbox(1);
    expect(await one.f.checkPage(one.session, one.username, { limit: 100 }, () => 2 * CHECK_BUDGET_BYTES)).toMatchObject({ hasMore: false });
  });

  it('cuts long bodies and marks them truncated', async () => {
    const { f, session, username } = await filledInbox(2, CHECK_FIELD_BYTES + 10);
    const page = await f.checkPage(session, username, { limit: 100 }, jsonBytes);
    for (const message of page.messages) {
      expect(message.truncated).toBe(true);
      expect(Buffer.byteLength(message.text)).toBe(CHECK_FIELD_BYTES);
    }
  });

  it('refuses bad limits and ids, and a before that is not a message of the inbox', async () => {
    const { f, session, username } = await filledInbox(2);
    const other = await filledInbox(1);
    const check = (request: { limit: number; beforeId?: string; sinceId?: string }) => codeOf(f.checkPage(session, username, request, jsonBytes));
    for (const limit of [0, 101, 1.5, -1, Number.NaN]) expect(await check({ limit })).toBe('invalid_request');
    expect(await check({ limit: 1, beforeId: 'not an id' })).toBe('invalid_request');
    expect(await check({ limit: 1, beforeId: other.newestFirst[0] ?? '' })).toBe('invalid_request');
    expect(await check({ limit: 1, beforeId: 'AAAAAAAAAAAAAAAAAAAAAA' })).toBe('invalid_request');
    expect(await check({ limit: 1 })).toBe('no error');
    expect(await check({ limit: 100 })).toBe('no error');
  });
});
