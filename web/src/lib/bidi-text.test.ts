import { describe, expect, it } from 'vitest';
import { showBidiControls, splitBidiControls, withoutBidiControls } from './bidi-text.js';

describe('bidi controls in mail-derived text', () => {
  it('splits text at every embedding, override and isolate, naming each', () => {
    expect(splitBidiControls('Invoice \u202efdp.exe')).toEqual([
      { kind: 'text', text: 'Invoice ' },
      { kind: 'control', name: 'RLO', codePoint: 'U+202E' },
      { kind: 'text', text: 'fdp.exe' },
    ]);
    const all = '\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069';
    expect(splitBidiControls(all).map((part) => (part.kind === 'control' ? part.name : part.text))).toEqual(['LRE', 'RLE', 'PDF', 'LRO', 'RLO', 'LRI', 'RLI', 'FSI', 'PDI']);
    expect(splitBidiControls(`${all}x`).at(-1)).toEqual({ kind: 'text', text: 'x' });
  });

  it('leaves ordinary text, right-to-left scripts and the marks alone', () => {
    for (const text of ['', 'Plain Sender', 'שלום עולם', 'مرحبا', 'a\u200fb\u200ec\u061cd']) {
      expect(splitBidiControls(text), text).toEqual([{ kind: 'text', text }]);
      expect(showBidiControls(text)).toBe(text);
      expect(withoutBidiControls(text)).toBe(text);
    }
  });

  it('writes controls as [NAME] where only plain text fits, and drops them from file names', () => {
    expect(showBidiControls('Support \u202etset.knab@troppus')).toBe('Support [RLO]tset.knab@troppus');
    expect(showBidiControls('\u2066a\u2069')).toBe('[LRI]a[PDI]');
    expect(withoutBidiControls('Invoice \u202efdp.exe')).toBe('Invoice fdp.exe');
  });
});
