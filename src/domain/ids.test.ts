import { describe, expect, it } from 'vitest';
import { ID_PATTERN, isId, newId, newTimeOrderedId } from './ids.js';

describe('newId', () => {
  it('gives 22-character base64url ids, all different, across refills of its random pool', () => {
    // 1,000 ids draw the pool four times: a refill that repeated bytes would repeat ids.
    const ids = Array.from({ length: 1000 }, () => newId());
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(isId(id) && ID_PATTERN.test(id)).toBe(true);
    // 128 random bits each: over all ids every base64url character shows up.
    expect(new Set(ids.join('')).size).toBe(64);
  });
});

describe('newTimeOrderedId', () => {
  it('gives ids of the same shape whose first 48 bits are the time and the rest random', () => {
    const now = Date.UTC(2026, 10, 27, 12, 0, 0, 123);
    const ids = Array.from({ length: 1000 }, () => newTimeOrderedId(now));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) {
      expect(isId(id)).toBe(true);
      expect(Buffer.from(id, 'base64url').readUIntBE(0, 6)).toBe(now);
    }
    // Ids of the same moment share the characters of the time (the first 48 bits: 8 characters).
    expect(new Set(ids.map((id) => id.slice(0, 8))).size).toBe(1);
    // The 80 random bits vary: every base64url character shows up among the rest.
    expect(new Set(ids.map((id) => id.slice(8)).join('')).size).toBe(64);
  });

  it('writes the time big-endian, so a later time sorts after an earlier one byte by byte', () => {
    const earlier = Buffer.from(newTimeOrderedId(1_000), 'base64url');
    const later = Buffer.from(newTimeOrderedId(2_000), 'base64url');
    expect(Buffer.compare(earlier.subarray(0, 6), later.subarray(0, 6))).toBe(-1);
  });
});

describe('newId beside newTimeOrderedId', () => {
  it('keeps giving whole ids when the two draw from the same pool in turn', () => {
    // 10 bytes, then 16, then 10…: the pool's end falls inside an id unless newId refills first.
    const ids = Array.from({ length: 2000 }, (_, i) => (i % 2 === 0 ? newTimeOrderedId() : newId()));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(isId(id)).toBe(true);
  });
});
