import { describe, expect, it } from 'vitest';
import { prefixWithin, SWEEP_MESSAGES_PER_TRANSACTION } from './deletions.js';
import { createSqliteStore } from './sqlite-store.js';

describe('prefixWithin', () => {
  const counts = new Map([
    ['a', 400],
    ['b', 400],
    ['c', 400],
    ['d', 0],
  ]);

  it('takes inboxes in order while their messages fit under the cap', () => {
    expect(prefixWithin(['a', 'b', 'c', 'd'], counts, 1000)).toEqual(['a', 'b']);
    expect(prefixWithin(['d', 'a'], counts, 1000)).toEqual(['d', 'a']);
  });

  it('always takes the first inbox, even one over the cap on its own', () => {
    expect(prefixWithin(['a', 'b'], counts, 100)).toEqual(['a']);
    expect(prefixWithin([], counts, 100)).toEqual([]);
  });
});

/** No quota in reach: this test is about sweeping. */
const UNCAPPED = { maxMessages: 1_000_000, maxBytes: 1024 ** 3 };

describe('deleteExpired on SQLite, in steps of at most SWEEP_MESSAGES_PER_TRANSACTION messages', () => {
  it('still deletes the whole batch in one call when it holds more messages than one step', async () => {
    const store = createSqliteStore(':memory:');
    await store.migrate();
    const created = new Date(Date.UTC(2030, 0, 1));
    const expired = new Date(created.getTime() + 60_000);
    const inboxes = 30;
    const each = Math.ceil((3 * SWEEP_MESSAGES_PER_TRANSACTION) / inboxes);
    for (let n = 0; n < inboxes; n += 1) {
      const id = `inbox-${n}`.padEnd(22, 'x');
      await store.insertInbox({ id, username: `u${n}`, domain: 'tempinbox.test', createdAt: created, expiresAt: expired, sessionId: null, licenseId: null }, created);
      const raw = new TextEncoder().encode('Subject: x\r\n\r\nx\r\n');
      const parsed = { from: '', to: '', subject: 'x', text: 'x', html: null, headers: [], messageId: null, attachments: [], codes: [], links: [] };
      await Promise.all(Array.from({ length: each }, () => store.insertMessage({ envelopeFrom: '', parsed, raw, receivedAt: created }, [id], { now: created, free: UNCAPPED, premium: UNCAPPED })));
    }
    const later = new Date(expired.getTime() + 1);
    expect(await store.deleteExpired(later, 500)).toEqual({ inboxes, messages: inboxes * each, sessions: 0 });
    expect(await store.deleteExpired(later, 500)).toEqual({ inboxes: 0, messages: 0, sessions: 0 });
    await store.close();
  });
});
