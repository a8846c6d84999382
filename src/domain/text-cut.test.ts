import { describe, expect, it } from 'vitest';
import { cutText } from './text-cut.js';

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

describe('cutText', () => {
  it('keeps text that fits, whatever its characters', () => {
    expect(cutText('héllo', 6)).toEqual({ text: 'héllo', truncated: false });
    expect(cutText('', 0)).toEqual({ text: '', truncated: false });
    expect(cutText('€€', 6)).toEqual({ text: '€€', truncated: false });
  });

  it('cuts at the byte bound on ASCII', () => {
    expect(cutText('abcdef', 4)).toEqual({ text: 'abcd', truncated: true });
  });

  it.each([
    ['two-byte', 'é', 2],
    ['three-byte', '€', 3],
    ['four-byte (surrogate pair)', '😀', 4],
  ])('never splits a %s character at the bound', (_name, char, width) => {
    const text = `a${char.repeat(10)}`;
    for (let max = 1; max < 1 + 10 * width; max += 1) {
      const cut = cutText(text, max);
      expect(cut.truncated).toBe(true);
      expect(bytes(cut.text)).toBeLessThanOrEqual(max);
      expect(bytes(cut.text)).toBeGreaterThan(max - width);
      expect(cut.text).not.toContain('\uFFFD');
      expect(text.startsWith(cut.text)).toBe(true);
      // A lone high surrogate would be half a character.
      expect(/[\uD800-\uDBFF]$/.test(cut.text)).toBe(false);
    }
  });

  it('bounds a long text to the limit', () => {
    const cut = cutText('x'.repeat(3 * 1024 * 1024), 256 * 1024);
    expect(cut).toEqual({ text: 'x'.repeat(256 * 1024), truncated: true });
  });
});
