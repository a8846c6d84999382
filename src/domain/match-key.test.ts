import { describe, expect, it } from 'vitest';
import { FOLD_INPUT_CHARS, MATCH_KEY_CHARS, foldFilter, foldForMatch, fromMatchKey, hasControlCharacter, matchKey } from './match-key.js';

describe('foldForMatch', () => {
  it.each([
    ['ÉLAN', 'élan'],
    ['e\u0301lan', 'élan'],
    ['STRASSE', 'strasse'],
    ['straße', 'strasse'],
    ['ẞ', 'ss'],
    ['ΟΔΟΣ', 'οδοσ'],
    ['οδος', 'οδοσ'],
    ['ΣΑΣ', 'σασ'],
    ['IŞIK', 'işik'],
    ['ışık', 'işik'],
    ['İstanbul', 'istanbul'],
    ['ﬁle', 'file'],
    ['ＡＢＣ', 'abc'],
    ['J\u030c', 'ǰ'],
    ['Kelvin \u212a', 'kelvin k'],
  ])('%s folds to %s', (text, folded) => {
    expect(foldForMatch(text)).toBe(folded);
  });

  it('folds a fold to itself (every character of the BMP and the next two planes)', () => {
    const unstable: string[] = [];
    for (let point = 0; point < 0x30000; point += 1) {
      if (point >= 0xd800 && point <= 0xdfff) continue;
      const once = foldForMatch(String.fromCodePoint(point));
      if (foldForMatch(once) !== once) unstable.push(point.toString(16));
    }
    expect(unstable).toEqual([]);
  });
});

describe('matchKey', () => {
  it('keeps the first MATCH_KEY_CHARS characters of the fold, never half a surrogate pair', () => {
    expect(matchKey('A'.repeat(MATCH_KEY_CHARS + 10))).toBe('a'.repeat(MATCH_KEY_CHARS));
    const emoji = `x${'😀'.repeat(MATCH_KEY_CHARS)}`;
    const key = matchKey(emoji);
    expect(key.length).toBe(MATCH_KEY_CHARS - 1);
    expect(key.at(-1)).not.toMatch(/[\ud800-\udbff]/);
    // ß folds to two characters: the key still stops at the bound.
    expect(matchKey('ß'.repeat(MATCH_KEY_CHARS))).toBe('s'.repeat(MATCH_KEY_CHARS));
  });

  it('folds no more than FOLD_INPUT_CHARS of a field, whatever its length', () => {
    // Joined, so the input is one flat string and the timing is matchKey's alone.
    const huge = ['a'.repeat(FOLD_INPUT_CHARS), 'Ω'.repeat(4_000_000)].join('');
    expect(matchKey(huge)).toBe('a'.repeat(MATCH_KEY_CHARS));
    // Folding the whole string takes about 350 ms; the bounded prefix, microseconds. This
    // thread's CPU time, the cheapest of three calls: a neighbour or a collection only adds.
    let best = Number.POSITIVE_INFINITY;
    for (let trial = 0; trial < 3; trial += 1) {
      const started = process.threadCpuUsage();
      matchKey(huge);
      const spent = process.threadCpuUsage(started);
      best = Math.min(best, (spent.user + spent.system) / 1000);
    }
    expect(best).toBeLessThan(50);
  });

  it('keeps the From header and the envelope sender apart with a line feed', () => {
    expect(fromMatchKey('Élise <E@X.org>', 'Bounce@X.org')).toBe('élise <e@x.org>\nbounce@x.org');
  });
});

describe('foldFilter', () => {
  it('folds each filter and makes an absent one empty', () => {
    expect(foldFilter({ from: 'STRASSE', subject: 'ΟΔΟΣ' })).toEqual({ to: '', from: 'strasse', subject: 'οδοσ' });
    expect(foldFilter(undefined)).toEqual({ to: '', from: '', subject: '' });
  });
});

describe('hasControlCharacter', () => {
  it('finds U+0000–U+001F and U+007F, and nothing else', () => {
    for (const text of ['\u0000', 'a\u0009b', '\n', '\u001f', 'x\u007f']) expect(hasControlCharacter(text), JSON.stringify(text)).toBe(true);
    for (const text of ['', 'plain', ' ', '\u0080', '\u0085', '\u00a0', '😀', 'ÉLAN']) expect(hasControlCharacter(text), JSON.stringify(text)).toBe(false);
  });
});
