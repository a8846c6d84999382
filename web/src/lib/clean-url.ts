/**
 * A URL attribute as a browser reads it before looking at the scheme: TAB, LF and CR removed
 * anywhere, and C0 controls and spaces (U+0000–U+0020) trimmed from both ends (WHATWG URL
 * parsing). Written as index scans, not an anchored `[…]+$` pattern: a regular expression
 * engine retries such a pattern from every character of a long run that is not at the end,
 * which is quadratic in a hostile attribute's length.
 */
export function cleanUrl(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isTrimmed(value.charCodeAt(start))) start += 1;
  while (end > start && isTrimmed(value.charCodeAt(end - 1))) end -= 1;
  return value.slice(start, end).replace(/[\t\n\r]/g, '');
}

/** C0 controls and the space. */
function isTrimmed(code: number): boolean {
  return code <= 0x20;
}
