import { describe, expect, it } from 'vitest';
import { structureProblem } from './input-guard.js';
import { DEFAULT_MAIL_LIMITS } from './mail-limits.js';

/** The counts byte by byte: every line feed ends a line; a line starting `--` may be a boundary. */
function counted(raw: Uint8Array): { lines: number; delimiters: number } {
  let lines = 0;
  let delimiters = 0;
  for (let i = 0; i < raw.length; i++) {
    if ((i === 0 || raw[i - 1] === 0x0a) && raw[i] === 0x2d && raw[i + 1] === 0x2d) delimiters++;
    if (raw[i] === 0x0a) lines++;
  }
  return { lines, delimiters };
}

describe('structureProblem', () => {
  it('counts lines and boundary-like lines as a byte-by-byte count does', () => {
    const pieces = ['--', '-', '\n', '\r\n', 'a', '--b\n', '\n--', ' '];
    let seed = 7;
    const next = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let round = 0; round < 300; round += 1) {
      const text = Array.from({ length: Math.floor(next() * 30) }, () => pieces[Math.floor(next() * pieces.length)] ?? '').join('');
      const raw = Buffer.from(text);
      const { lines, delimiters } = counted(raw);
      // Exactly at each bound passes; one under fails, and says which bound.
      expect(structureProblem(raw, { ...DEFAULT_MAIL_LIMITS, maxLines: lines, maxParts: delimiters }), JSON.stringify(text)).toBeNull();
      if (lines > 0) expect(structureProblem(raw, { ...DEFAULT_MAIL_LIMITS, maxLines: lines - 1, maxParts: delimiters })).toMatch(/lines/);
      if (delimiters > 0) expect(structureProblem(raw, { ...DEFAULT_MAIL_LIMITS, maxLines: lines, maxParts: delimiters - 1 })).toMatch(/boundary-like/);
    }
  });
});
