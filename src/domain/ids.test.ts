import { describe, expect, it } from 'vitest';
import { ID_PATTERN, isId, newId } from './ids.js';

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
