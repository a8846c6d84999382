/**
 * Spans and lines of the text the code finder reads (extract-codes.ts): each helper runs in
 * time linear in its input, or logarithmic in the spans it searches.
 */

/** A letter or a digit (one UTF-16 unit or a surrogate pair). */
const LETTER_OR_DIGIT = /^[\p{L}\p{N}]$/u;

/** Where a word or a number was found in a line: `start` inclusive, `end` exclusive. */
export interface Span {
  start: number;
  end: number;
}

/** Every match of a global `pattern` in `text`, as spans in order. */
export function spans(pattern: RegExp, text: string): Span[] {
  return [...text.matchAll(pattern)].map((match) => ({ start: match.index, end: match.index + match[0].length }));
}

/**
 * The index of the first span of `sorted` whose `key` is at least `value` (`sorted.length`
 * when none). Spans of one line are in order and do not overlap, so starts and ends both
 * ascend: looking one up costs a binary search, not a pass over every span of the line.
 */
export function firstAtLeast(sorted: readonly Span[], key: 'start' | 'end', value: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((sorted[middle]?.[key] ?? Number.POSITIVE_INFINITY) < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** The last span ending at or before `position`, if any. */
export function lastEndingBy(sorted: readonly Span[], position: number): Span | undefined {
  return sorted[firstAtLeast(sorted, 'end', position + 1) - 1];
}

/** The first span starting at or after `position`, if any. */
export function firstStartingFrom(sorted: readonly Span[], position: number): Span | undefined {
  return sorted[firstAtLeast(sorted, 'start', position)];
}

const isLetterOrDigit = (char: string): boolean => LETTER_OR_DIGIT.test(char);

/** Where the last letter or digit of `text` ends (its last UTF-16 unit; -1 when none), by a backward scan. */
export function lastLetterOrDigit(text: string): number {
  for (let index = text.length - 1; index >= 0; index -= 1) {
    const code = text.charCodeAt(index);
    // A low surrogate: test the whole pair, which starts one unit before.
    const pair = code >= 0xdc00 && code <= 0xdfff && index > 0;
    if (isLetterOrDigit(pair ? text.slice(index - 1, index + 1) : text.charAt(index))) return index;
  }
  return -1;
}

/** Full-width digits and Latin letters (Japanese, Chinese mail) as the ASCII a person types. */
export function asciiDigitsAndLetters(text: string): string {
  return text.replace(/[\uFF10-\uFF19\uFF21-\uFF3A\uFF41-\uFF5A]/g, (char) => String.fromCharCode(char.charCodeAt(0) - 0xfee0));
}

/** URLs and addresses go first: digits inside them are never codes. */
export function withoutLinks(text: string): string {
  const noUrls = text.replace(/\b(?:https?:\/\/|www\.)[^\s<>"'\])]+/giu, ' ');
  // The address pattern tries every position; without an @ there is nothing for it to find.
  if (!noUrls.includes('@')) return noUrls;
  return noUrls
    // Local part bounded as in RFC 5321 §4.5.3.1.1 (64): unbounded, a run of digits without
    // an "@" would be rescanned from every position (quadratic).
    .replace(/(?<![\p{L}\p{N}._%+-])[\p{L}\p{N}._%+-]{1,64}@[\p{L}\p{N}.-]{1,253}/gu, ' ');
}

/** The lines of `text` (split at CRLF, CR or LF) and where each starts in it. */
export function splitLines(text: string): { texts: string[]; starts: number[] } {
  const texts: string[] = [];
  const starts: number[] = [];
  let start = 0;
  for (let at = 0; at <= text.length; at += 1) {
    const code = at < text.length ? text.charCodeAt(at) : -1;
    if (code !== -1 && code !== 0x0a && code !== 0x0d) continue;
    texts.push(text.slice(start, at));
    starts.push(start);
    if (code === 0x0d && text.charCodeAt(at + 1) === 0x0a) at += 1;
    start = at + 1;
  }
  return { texts, starts };
}
