import { describe, expect, it } from 'vitest';
import type { MessageView } from '../domain/types.js';
import { ListingJsonCache } from './listing-json-cache.js';
import { messageJson, presentCheck, renderCheckPage } from './presenters.js';

const message = (id: string, text: string): MessageView => ({
  id,
  inboxId: 'inbox',
  from: '"Ann" <ann@example.org>',
  to: 'bob@tempinbox.test',
  recipient: 'bob+tag@tempinbox.test',
  subject: 'Grüße "quoted" \u2028',
  text,
  html: null,
  receivedAt: new Date(Date.UTC(2026, 0, 1)),
  size: 10,
  attachments: [{ id: 'a', filename: 'x.pdf', contentType: 'application/pdf', size: 3 }],
  truncated: true,
  codes: ['482913'],
  links: [{ url: 'https://example.org/a?b="c"', text: 'Öffnen' }],
  auth: null,
});

describe('renderCheckPage', () => {
  it('renders exactly the JSON of presentCheck, and measures each message in bytes', () => {
    const cache = new ListingJsonCache();
    const messages = [message('m2', 'zwei 🎉\n\u0001'), message('m1', '')];
    const page = { messages, hasMore: true };
    const rendered = renderCheckPage({ messages: messages.map((m) => cache.take(m)), hasMore: true });
    expect(JSON.parse(rendered)).toEqual(presentCheck(page));
    expect(rendered).toBe(JSON.stringify(presentCheck(page)));
    // The budget's measure: the message's JSON and the comma after it.
    expect(cache.bytes(cache.take(messages[0] as MessageView))).toBe(Buffer.byteLength(JSON.stringify(presentCheck(page).emails[0])) + 1);
    expect(messageJson(cache)(messages[0] as MessageView)).toBe(JSON.stringify(presentCheck(page).emails[0]));
    expect(renderCheckPage({ messages: [], hasMore: false })).toBe('{"success":true,"count":0,"emails":[],"has_more":false}');
  });
});

describe('ListingJsonCache', () => {
  it('builds the same JSON as presentCheck, renders it the same way, and serves it again without rebuilding', () => {
    const cache = new ListingJsonCache();
    const messages = [message('m2', 'zwei 🎉\n\u0001'), message('m1', '')];
    const fragments = messages.map((m) => cache.build(m));
    expect(renderCheckPage({ messages: fragments, hasMore: true })).toBe(JSON.stringify(presentCheck({ messages, hasMore: true })));
    expect(fragments[0]?.bytes).toBe(Buffer.byteLength(fragments[0]?.text ?? ''));
    expect(cache.cached('m2')).toBe(fragments[0]);
    expect(cache.held('m2')).toBe(fragments[0]);
    expect(cache.cached('unknown')).toBeUndefined();
  });

  it('keeps at most its byte bound, dropping the least recently used first, and never keeps an oversized fragment', () => {
    const size = Buffer.byteLength(JSON.stringify(presentCheck({ messages: [message('a', 'x'.repeat(100))], hasMore: false }).emails[0]));
    const cache = new ListingJsonCache(size * 3, size * 2);
    for (const id of ['a', 'b', 'c']) cache.build(message(id, 'x'.repeat(100)));
    expect(cache.size).toEqual({ entries: 3, bytes: size * 3 });
    cache.cached('a');
    cache.build(message('d', 'x'.repeat(100)));
    expect(['a', 'b', 'c', 'd'].map((id) => cache.cached(id) !== undefined)).toEqual([true, false, true, true]);
    expect(cache.size.bytes).toBeLessThanOrEqual(size * 3);
    const big = cache.build(message('big', 'x'.repeat(size * 2)));
    expect(big.bytes).toBeGreaterThan(size * 2);
    expect(cache.cached('big')).toBeUndefined();
    expect(cache.size.entries).toBe(3);
  });
});
