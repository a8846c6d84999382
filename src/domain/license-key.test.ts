import { describe, expect, it } from 'vitest';
import { isWellFormedLicenseKey, newLicenseKey, normalizeLicenseKey } from './license-key.js';

describe('license keys', () => {
  it('mints distinct well-formed keys of 160 bits', () => {
    const keys = new Set(Array.from({ length: 500 }, () => newLicenseKey()));
    expect(keys.size).toBe(500);
    for (const key of keys) {
      expect(key).toMatch(/^TI(-[0-9A-HJKMNP-TV-Z]{8}){4}$/);
      expect(isWellFormedLicenseKey(key)).toBe(true);
    }
  });

  it('accepts a key typed in lowercase with spaces around it', () => {
    const key = newLicenseKey();
    expect(isWellFormedLicenseKey(normalizeLicenseKey(`  ${key.toLowerCase()} `))).toBe(true);
  });

  it.each(['', 'TI-', 'TI-AAAA', 'TI-IIIIIIII-AAAAAAAA-AAAAAAAA-AAAAAAAA', `${'TI-AAAAAAAA'.repeat(5)}`, 'x'.repeat(200)])(
    'rejects malformed %j',
    (key) => {
      expect(isWellFormedLicenseKey(normalizeLicenseKey(key))).toBe(false);
    },
  );
});
