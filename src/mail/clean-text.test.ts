import { describe, expect, it } from 'vitest';
import { cleanLine, cleanText, repairC1, truncate } from './clean-text.js';

describe('clean-text', () => {
  it('truncates without splitting a surrogate pair', () => {
    expect(truncate('ab🎉', 3)).toBe('ab');
    expect(truncate('ab🎉', 4)).toBe('ab🎉');
    expect(truncate('abc', 0)).toBe('');
  });

  it('keeps tabs and line breaks in text, drops other controls and lone surrogates', () => {
    expect(cleanText('a\u0000b\tc\r\nd\u001be\u007f', 100)).toBe('ab\tc\r\nde');
    expect(cleanText('x\uD800y\uDC00z', 100)).toBe('x\uFFFDy\uFFFDz');
    expect(cleanText('abcdef', 3)).toBe('abc');
    // Each kind alone (the scan that lets clean text through untouched must see every one).
    expect(cleanText('a\u0085b', 100)).toBe('a\u2026b');
    expect(cleanText('a\u000bb\u001fc', 100)).toBe('abc');
    expect(cleanText('ok 🎉\tdone\r\n', 100)).toBe('ok 🎉\tdone\r\n');
    expect(cleanText('\uDC00', 100)).toBe('\uFFFD');
    expect(cleanText('plain text, € and ü\r\n', 100)).toBe('plain text, € and ü\r\n');
  });

  it('makes one trimmed line of a header value', () => {
    expect(cleanLine('  a\r\nInjected: 1\u0000\tb  ', 100)).toBe('a Injected: 1 b');
  });

  it('maps C1 controls to their windows-1252 characters', () => {
    expect(repairC1('\u0080 \u0085 \u0091x\u0092 \u0099 \u009f \u0081\u008d\u008f\u0090\u009d')).toBe('€ … ‘x’ ™ Ÿ ');
  });
});
