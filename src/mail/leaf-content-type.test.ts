import { describe, expect, it } from 'vitest';
import { leafContentType } from './leaf-content-type.js';

describe('leafContentType', () => {
  it('keeps valid types', () => {
    expect(leafContentType('text/calendar')).toBe('text/calendar');
    expect(leafContentType('Application/PGP-Signature')).toBe('application/pgp-signature');
  });

  it('reads text without a subtype, and an empty type, as text/plain (RFC 2045 §5.2)', () => {
    for (const value of ['text', 'TEXT', 'text/', 'text;', ' text plain', '']) expect(leafContentType(value), value).toBe('text/plain');
  });

  it('keeps the type of a value with junk after it (a missing semicolon)', () => {
    expect(leafContentType('text/html charset=utf-8')).toBe('text/html');
  });

  it('leaves other invalid values alone (they stay attachments)', () => {
    expect(leafContentType('not a type')).toBe('not a type');
    expect(leafContentType('texts')).toBe('texts');
    expect(leafContentType('image')).toBe('image');
  });
});
