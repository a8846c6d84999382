import { randomBytes } from 'node:crypto';

/**
 * License keys: `TI-` and 32 characters of Crockford base32 in four groups (160 random bits),
 * e.g. `TI-7G2K-...`. The shape is checked before any lookup so that junk never reaches storage.
 */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const KEY_PATTERN = /^TI(?:-[0-9A-HJKMNP-TV-Z]{8}){4}$/;

/** Mints a new random license key. */
export function newLicenseKey(): string {
  const bytes = randomBytes(20);
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return `TI-${out.slice(0, 8)}-${out.slice(8, 16)}-${out.slice(16, 24)}-${out.slice(24, 32)}`;
}

/** Canonical form of a key as typed: trimmed, uppercase (base32 is case-insensitive). */
export function normalizeLicenseKey(input: string): string {
  return input.trim().toUpperCase();
}

/** True when a normalised key has the shape of a minted key. */
export function isWellFormedLicenseKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}
