import { describe, expect, it } from 'vitest';
import { checkEtag, ifNoneMatchHits } from './check-etag.js';

describe('checkEtag', () => {
  const base = { inboxId: 'inbox', version: '2.10.19', limit: 100 };

  it('is a quoted 22-character tag that changes with every input and hides the version', () => {
    const tag = checkEtag(base);
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
    expect(tag).not.toContain(base.version);
    expect(checkEtag({ ...base })).toBe(tag);
    const variants = [
      { ...base, inboxId: 'other' },
      { ...base, version: '2.11.20' },
      { ...base, sinceId: 'm1' },
      { ...base, beforeId: 'm1' },
      { ...base, limit: 99 },
      { ...base, filter: { to: 'a' } },
      { ...base, filter: { from: 'a' } },
      { ...base, filter: { subject: 'a' } },
    ];
    expect(new Set([tag, ...variants.map(checkEtag)]).size).toBe(variants.length + 1);
  });
});

describe('ifNoneMatchHits', () => {
  it('matches the tag, its weak form, a list holding it, and *; nothing else', () => {
    expect(ifNoneMatchHits('"abc"', '"abc"')).toBe(true);
    expect(ifNoneMatchHits('W/"abc"', '"abc"')).toBe(true);
    expect(ifNoneMatchHits('"x", W/"abc" ', '"abc"')).toBe(true);
    expect(ifNoneMatchHits(' * ', '"abc"')).toBe(true);
    expect(ifNoneMatchHits(undefined, '"abc"')).toBe(false);
    expect(ifNoneMatchHits('abc', '"abc"')).toBe(false);
    expect(ifNoneMatchHits('"abcd"', '"abc"')).toBe(false);
    expect(ifNoneMatchHits('', '"abc"')).toBe(false);
  });
});
