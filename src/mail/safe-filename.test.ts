import { describe, expect, it } from 'vitest';
import { MAX_FILENAME_CHARS, safeFilename } from './safe-filename.js';

describe('safeFilename', () => {
  it.each([
    ['report.pdf', 'report.pdf'],
    ['  Quarterly report 2025.xlsx  ', 'Quarterly report 2025.xlsx'],
    ['Grüße aus Köln.txt', 'Grüße aus Köln.txt'],
    ['東京.png', '東京.png'],
    // Directory parts, both separators, absolute paths.
    ['../../etc/passwd', 'passwd'],
    ['..\\..\\windows\\system.ini', 'system.ini'],
    ['/etc/shadow', 'shadow'],
    ['C:\\Users\\me\\notes.txt', 'notes.txt'],
    ['dir/sub\\mixed/name.doc', 'name.doc'],
    // Dots: none leading, no runs, none trailing.
    ['.htaccess', 'htaccess'],
    ['...hidden.png', 'hidden.png'],
    ['a..b.txt', 'a.b.txt'],
    ['name.pdf.', 'name.pdf'],
    // Controls and invisible format characters.
    ['nul\u0000byte.pdf', 'nulbyte.pdf'],
    ['line\r\nbreak.txt', 'linebreak.txt'],
    ['tab\tname.txt', 'tabname.txt'],
    ['invoice\u202Efdp.exe', 'invoicefdp.exe'],
    ['zero\u200Bwidth.txt', 'zerowidth.txt'],
    ['\uFEFFbom.txt', 'bom.txt'],
    // Windows-reserved characters and device names.
    ['a<b>c:d"e|f?g*h.txt', 'abcdefgh.txt'],
    ['CON', '_CON'],
    ['nul.txt', '_nul.txt'],
    ['com1.log', '_com1.log'],
    ['console.log', 'console.log'],
    // windows-1252 bytes decoded as latin1 are repaired, not dropped.
    ['\u0093quoted\u0094.txt', '\u201Cquoted\u201D.txt'],
    ['multiple   spaces.txt', 'multiple spaces.txt'],
  ])('%j → %j', (input, expected) => {
    expect(safeFilename(input, 1, 'application/octet-stream')).toBe(expected);
  });

  it.each([
    [undefined, 3, 'application/pdf', 'attachment-3.pdf'],
    ['', 1, 'image/png', 'attachment-1.png'],
    ['   ', 2, 'image/jpeg', 'attachment-2.jpg'],
    ['..', 4, 'text/plain; charset=utf-8', 'attachment-4.txt'],
    ['../', 5, 'TEXT/HTML', 'attachment-5.html'],
    ['/', 6, 'message/rfc822', 'attachment-6.eml'],
    ['???', 7, 'text/calendar', 'attachment-7.ics'],
    ['\u0000\u0001', 8, 'application/x-unknown', 'attachment-8.bin'],
    [undefined, 9, 'constructor', 'attachment-9.bin'],
    [undefined, 10, '__proto__', 'attachment-10.bin'],
    [undefined, -1, 'application/pdf', 'attachment-0.pdf'],
    [undefined, Number.NaN, 'application/pdf', 'attachment-0.pdf'],
  ])('falls back for %j (index %d, %s) → %s', (input, index, type, expected) => {
    expect(safeFilename(input, index, type)).toBe(expected);
  });

  it('caps long names at 200 code points and keeps the extension', () => {
    const name = safeFilename(`${'a'.repeat(500)}.pdf`, 1, 'application/pdf');
    expect(name).toHaveLength(MAX_FILENAME_CHARS);
    expect(name.endsWith('.pdf')).toBe(true);
  });

  it('counts code points, never splitting a surrogate pair', () => {
    const name = safeFilename(`${'🎉'.repeat(300)}.txt`, 1, 'text/plain');
    expect(Array.from(name)).toHaveLength(MAX_FILENAME_CHARS);
    expect(name.endsWith('🎉.txt')).toBe(true);
    expect(name).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/);
  });

  it('cuts a long name without a usable extension at the cap', () => {
    expect(safeFilename('b'.repeat(300), 1, 'text/plain')).toHaveLength(MAX_FILENAME_CHARS);
    const longExtension = safeFilename(`name.${'x'.repeat(300)}`, 1, 'text/plain');
    expect(longExtension).toHaveLength(MAX_FILENAME_CHARS);
    expect(longExtension.startsWith('name.xxx')).toBe(true);
  });

  it('does not leave a dot run where the base was cut', () => {
    const name = safeFilename(`${'a'.repeat(195)}. . . .${'b'.repeat(10)}.pdf`, 1, 'application/pdf');
    expect(name).not.toContain('..');
    expect(name).not.toMatch(/[ .]\.pdf$/);
    expect(name.endsWith('.pdf')).toBe(true);
  });

  it('stays fast on a huge hostile name', () => {
    const started = performance.now();
    const name = safeFilename(`${'../'.repeat(1_000_000)}x.txt`, 1, 'text/plain');
    expect(performance.now() - started).toBeLessThan(1000);
    expect(name).toBe('x.txt');
    expect(safeFilename(`${'a'.repeat(1_000_000)}.txt`, 1, 'text/plain')).toBe(`${'a'.repeat(196)}.txt`);
  });
});
