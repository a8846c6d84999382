import { CANDIDATE, codeShape, isPartOfOtherNumber, type CodeShape } from './extract-codes-shapes.js';
import { KEYWORD, NEGATIVE } from './extract-codes-words.js';

/**
 * Most characters of subject and text scanned. Codes sit at the top of a message (the
 * longest corpus message puts its code within 1 000 characters); 32 Ki is thirty times that
 * and keeps the work per message small and bounded whatever the body's size.
 */
export const MAX_CODE_SCAN_CHARS = 32 * 1024;

/** Most codes returned. A message carries one code, at most a few (backup codes). */
export const MAX_CODES = 5;

/** Most candidate tokens examined, so a body of nothing but numbers costs bounded work. */
export const MAX_CODE_CANDIDATES = 500;

/** Farthest a keyword may precede its code on the same line ("TAN … über 250,00 EUR … lautet 71 84 26"). */
const MAX_KEYWORD_BEFORE = 100;

/** Farthest a keyword may follow its code on the same line ("481029是您的登录验证码"). */
const MAX_KEYWORD_AFTER = 60;

/** Non-empty lines above a code on a line of its own that may announce it ("Your code:", blank, code). */
const LINES_ABOVE = 2;

/** A negative this close to a keyword makes the keyword mean something else ("zip code", "código postal"). */
const ADJACENT = 5;

/** Farthest a keyword may precede a year-like number for it to be a code ("code is 2043", not "code … 2026"). */
const YEAR_KEYWORD_GAP = 12;

/** How far after a code a negative still speaks about it ("BF2026 at checkout"). */
const AFTER_WINDOW = 30;

/** The rest of a Latin or Cyrillic word. */
const WORD_REST = /[\p{Script=Latin}\p{Script=Cyrillic}]*/uy;

interface Span {
  start: number;
  end: number;
}

interface Line {
  text: string;
  keywords: Span[];
  negatives: Span[];
}

interface Found {
  code: string;
  score: number;
  order: number;
}

function spans(pattern: RegExp, text: string): Span[] {
  return [...text.matchAll(pattern)].map((match) => ({ start: match.index, end: match.index + match[0].length }));
}

/** Whether two spans touch: overlap, or stand within `ADJACENT` characters in one sentence. */
function touching(text: string, a: Span, b: Span): boolean {
  if (a.end > b.start - ADJACENT && a.start < b.end + ADJACENT) {
    const gap = text.slice(Math.min(a.end, b.end), Math.max(a.start, b.start));
    return !/[.!?。！？;；]/.test(gap);
  }
  return false;
}

/** A keyword next to (or inside) a negative is not one: "zip code", "Gutscheincode", "promo code". */
function analyse(text: string): Line {
  // A negative stem reaches to the end of its word ("Authoriz" → "Authorization").
  const negatives = spans(NEGATIVE, text).map((span) => {
    WORD_REST.lastIndex = span.end;
    return { start: span.start, end: span.end + (WORD_REST.exec(text)?.[0].length ?? 0) };
  });
  const keywords = spans(KEYWORD, text).filter((keyword) => !negatives.some((negative) => touching(text, negative, keyword)));
  return { text, keywords, negatives };
}

const hasDigit = (text: string): boolean => /\d/.test(text);

/**
 * Whether a negative before `position` on the line still speaks about what follows: it is
 * after every keyword, and no other number stands between it and `position` (in "amount
 * 1 500,00 ₽: 83019472" the amount took "amount").
 */
function negativeBefore(line: Line, position: number): boolean {
  const negative = line.negatives.filter((span) => span.end <= position).at(-1);
  if (negative === undefined || hasDigit(line.text.slice(negative.end, position))) return false;
  return !line.keywords.some((keyword) => keyword.start >= negative.end && keyword.end <= position);
}

/** Whether a negative right after the code, in the same sentence, labels it ("BF2026 at checkout"). */
function negativeAfter(line: Line, end: number): boolean {
  const rest = line.text.slice(end, end + AFTER_WINDOW);
  const sentenceEnd = rest.search(/[.!?。！？;；]/);
  const limit = end + (sentenceEnd === -1 ? rest.length : sentenceEnd);
  return line.negatives.some((span) => span.start >= end && span.start < limit && !hasDigit(line.text.slice(end, span.start)));
}

/** How likely the token at `start`–`end` of line `index` is a code; 0 when it is not one. */
function contextScore(lines: Line[], index: number, start: number, end: number, shape: CodeShape): number {
  const line = lines[index];
  if (line === undefined || negativeBefore(line, start) || negativeAfter(line, end)) return 0;

  const before = line.keywords.filter((span) => span.end <= start).at(-1);
  if (before !== undefined && start - before.end <= MAX_KEYWORD_BEFORE) {
    // A year is a code only right after its keyword ("code: 2048", "code is 2043").
    if (shape.yearLike && start - before.end > YEAR_KEYWORD_GAP) return 0;
    return 3 - (start - before.end) / 1000;
  }
  if (shape.yearLike) return 0;

  const after = line.keywords.find((span) => span.start >= end);
  if (after !== undefined && after.start - end <= MAX_KEYWORD_AFTER && !line.negatives.some((span) => span.start >= end && span.start < after.start)) {
    return 2.5 - (after.start - end) / 1000;
  }

  // A code on a line of its own, announced by the line(s) above or the line below.
  const rest = line.text.slice(0, start) + line.text.slice(end);
  if (/[\p{L}\p{N}]/u.test(rest)) return 0;
  let seen = 0;
  for (let above = index - 1; above >= 0 && seen < LINES_ABOVE; above -= 1) {
    const candidate = lines[above];
    if (candidate === undefined || candidate.text.trim() === '') continue;
    seen += 1;
    if (negativeBefore(candidate, candidate.text.length)) return 0;
    if (candidate.keywords.length > 0) return 2 - (seen - 1) / 2;
  }
  const below = lines.slice(index + 1).find((next) => next.text.trim() !== '');
  const belowKeyword = below?.keywords[0];
  return below !== undefined && belowKeyword !== undefined && !negativeBefore(below, belowKeyword.start) ? 1 : 0;
}

/** Full-width digits and Latin letters (Japanese, Chinese mail) as the ASCII a person types. */
function asciiDigitsAndLetters(text: string): string {
  return text.replace(/[\uFF10-\uFF19\uFF21-\uFF3A\uFF41-\uFF5A]/g, (char) => String.fromCharCode(char.charCodeAt(0) - 0xfee0));
}

/** URLs and addresses go first: digits inside them are never codes. */
function withoutLinks(text: string): string {
  return text
    .replace(/\b(?:https?:\/\/|www\.)[^\s<>"'\])]+/giu, ' ')
    .replace(/[\p{L}\p{N}._%+-]+@[\p{L}\p{N}.-]+\.[\p{L}]{2,}/gu, ' ');
}

const SHAPE_BONUS = (code: string): number => (/^\d{6}$/.test(code) ? 0.2 : code.length <= 4 ? -0.2 : 0);

/**
 * The one-time codes of a message (docs/codes.md): tokens shaped like a code and announced
 * by a keyword in the same line, or on a line of their own under (or above) one, in any of
 * thirteen languages; never a number labelled as something else (order, price, phone…), a
 * date, a time, a year, or digits inside a link. Most likely first, at most `MAX_CODES`,
 * without duplicates; `[]` when none. Pure and bounded: at most `MAX_CODE_SCAN_CHARS` read.
 */
export function extractCodes(subject: string, text: string): string[] {
  const input = withoutLinks(asciiDigitsAndLetters(`${subject}\n${text}`.slice(0, MAX_CODE_SCAN_CHARS)));
  const lines = input.split(/\r\n|\r|\n/).map(analyse);
  const found = new Map<string, Found>();
  let examined = 0;
  lines.forEach((line, index) => {
    for (const match of line.text.matchAll(CANDIDATE)) {
      examined += 1;
      if (examined > MAX_CODE_CANDIDATES) return;
      const start = match.index;
      const end = start + match[0].length;
      const shape = codeShape(match[0]);
      if (shape === null || isPartOfOtherNumber(line.text, start, end)) continue;
      const score = contextScore(lines, index, start, end, shape);
      if (score <= 0) continue;
      const total = score + SHAPE_BONUS(shape.code);
      const previous = found.get(shape.code);
      if (previous === undefined || previous.score < total) {
        found.set(shape.code, { code: shape.code, score: total, order: previous?.order ?? found.size });
      }
    }
  });
  return [...found.values()]
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .slice(0, MAX_CODES)
    .map((entry) => entry.code);
}
