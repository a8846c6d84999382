import { CANDIDATE, codeShape, isPartOfOtherNumber, type CodeShape } from './extract-codes-shapes.js';
import { KEYWORD, NEGATIVE } from './extract-codes-words.js';
import {
  asciiDigitsAndLetters,
  firstAtLeast,
  firstStartingFrom,
  lastEndingBy,
  lastLetterOrDigit,
  spans,
  splitLines,
  withoutLinks,
  type Span,
} from './extract-codes-text.js';

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

/** Farthest a negative word may precede the number it labels ("Bestellnummer: … 3024819203"). */
const NEGATIVE_REACH = 100;

/** Most lines (blank ones included) between a code on its own line and the line announcing it. */
const LINES_APART = 5;

/** A negative this close to a keyword makes the keyword mean something else ("zip code", "código postal"). */
const ADJACENT = 5;

/**
 * What may stand between a keyword and a year-shaped code: a colon or dash and at most one
 * short word ("code: 2043", "code is 2043", "Code lautet 2043"), not a clause ("code, since 2019").
 */
const YEAR_GAP = /^[\s:：=–—-]*(?:\p{L}{1,8}[\s:：=–—-]*)?$/u;

/** How far after a code a negative still speaks about it ("BF2026 at checkout"). */
const AFTER_WINDOW = 30;

/** The rest of a Latin or Cyrillic word. */
const WORD_REST = /^[\p{Script=Latin}\p{Script=Cyrillic}]*/u;

/** Longest word ending looked at: "Sendungsverfolgungsnummer" is 25; a bound keeps hostile lines linear. */
const MAX_WORD_REST = 40;

interface Line {
  text: string;
  keywords: Span[];
  negatives: Span[];
  /** Where the line's first and last letter or digit are (-1 when it has none). */
  firstWordChar: number;
  lastWordChar: number;
}

interface Found {
  code: string;
  score: number;
  order: number;
}

/** Whether two spans touch: overlap, or stand within `ADJACENT` characters in one sentence. */
function touching(text: string, a: Span, b: Span): boolean {
  if (a.end > b.start - ADJACENT && a.start < b.end + ADJACENT) {
    const gap = text.slice(Math.min(a.end, b.end), Math.max(a.start, b.start));
    return !/[.!?。！？;；]/.test(gap);
  }
  return false;
}

/**
 * Whether a negative touches `keyword`. Only the negatives within `ADJACENT` characters of
 * it can, and non-overlapping spans near one keyword are few: a line full of keywords and
 * negatives costs a pass over each list, not their product.
 */
function touchesNegative(text: string, negatives: readonly Span[], keyword: Span): boolean {
  for (let index = firstAtLeast(negatives, 'end', keyword.start - ADJACENT + 1); index < negatives.length; index += 1) {
    const negative = negatives[index];
    if (negative === undefined || negative.start >= keyword.end + ADJACENT) break;
    if (touching(text, negative, keyword)) return true;
  }
  return false;
}

/** A keyword next to (or inside) a negative is not one: "zip code", "Gutscheincode", "promo code". */
function analyse(text: string): Line {
  // A negative stem reaches to the end of its word ("Authoriz" → "Authorization").
  const negatives = spans(NEGATIVE, text).map((span) => ({
    start: span.start,
    end: span.end + (WORD_REST.exec(text.slice(span.end, span.end + MAX_WORD_REST))?.[0].length ?? 0),
  }));
  const keywords = spans(KEYWORD, text).filter((keyword) => !touchesNegative(text, negatives, keyword));
  const firstWordChar = text.search(/[\p{L}\p{N}]/u);
  const lastWordChar = firstWordChar === -1 ? -1 : lastLetterOrDigit(text);
  return { text, keywords, negatives, firstWordChar, lastWordChar };
}

const hasDigit = (text: string): boolean => /\d/.test(text);

/**
 * Whether a negative before `position` on the line still speaks about what follows: it is
 * after every keyword, and no other number stands between it and `position` (in "amount
 * 1 500,00 ₽: 83019472" the amount took "amount").
 */
function negativeBefore(line: Line, position: number): boolean {
  const negative = lastEndingBy(line.negatives, position);
  if (negative === undefined || position - negative.end > NEGATIVE_REACH || hasDigit(line.text.slice(negative.end, position))) return false;
  const keyword = firstStartingFrom(line.keywords, negative.end);
  return keyword === undefined || keyword.end > position;
}

/** Whether a negative right after the code, in the same sentence, labels it ("BF2026 at checkout"). */
function negativeAfter(line: Line, end: number): boolean {
  const rest = line.text.slice(end, end + AFTER_WINDOW);
  const sentenceEnd = rest.search(/[.!?。！？;；]/);
  const limit = end + (sentenceEnd === -1 ? rest.length : sentenceEnd);
  for (let index = firstAtLeast(line.negatives, 'start', end); index < line.negatives.length; index += 1) {
    const span = line.negatives[index];
    if (span === undefined || span.start >= limit) break;
    if (!hasDigit(line.text.slice(end, span.start))) return true;
  }
  return false;
}

/** How likely the token at `start`–`end` of line `index` is a code; 0 when it is not one. */
/** The analysed line at an index (undefined past either end), analysed only when first asked for. */
type LineAt = (index: number) => Line | undefined;

function contextScore(lines: LineAt, index: number, start: number, end: number, shape: CodeShape): number {
  const line = lines(index);
  if (line === undefined || negativeBefore(line, start) || negativeAfter(line, end)) return 0;

  const before = lastEndingBy(line.keywords, start);
  if (before !== undefined && start - before.end <= MAX_KEYWORD_BEFORE) {
    // A year is a code only right after its keyword ("code: 2048", "code is 2043").
    if (shape.yearLike && !YEAR_GAP.test(line.text.slice(before.end, start))) return 0;
    return 3 - (start - before.end) / 1000;
  }
  if (shape.yearLike) return 0;

  const after = firstStartingFrom(line.keywords, end);
  if (after !== undefined && after.start - end <= MAX_KEYWORD_AFTER && (firstStartingFrom(line.negatives, end)?.start ?? Number.POSITIVE_INFINITY) >= after.start) {
    return 2.5 - (after.start - end) / 1000;
  }

  // A code on a line of its own, announced by the line(s) above or the line below.
  if (line.firstWordChar < start || line.lastWordChar >= end) return 0;
  let seen = 0;
  for (let above = index - 1; above >= Math.max(0, index - LINES_APART) && seen < LINES_ABOVE; above -= 1) {
    const candidate = lines(above);
    if (candidate === undefined || candidate.firstWordChar === -1) continue;
    seen += 1;
    if (negativeBefore(candidate, candidate.text.length)) return 0;
    if (candidate.keywords.length > 0) return 2 - (seen - 1) / 2;
  }
  let below: Line | undefined;
  for (let next = index + 1; next <= index + LINES_APART && below === undefined; next += 1) {
    const candidate = lines(next);
    if (candidate === undefined) break;
    if (candidate.firstWordChar !== -1) below = candidate;
  }
  const belowKeyword = below?.keywords[0];
  return below !== undefined && belowKeyword !== undefined && !negativeBefore(below, belowKeyword.start) ? 1 : 0;
}

/** A code the subject alone may vouch for: six to eight digits, or letters and digits mixed. */
const SUBJECT_ONLY_SHAPE = /^(?:\d{6,8}|(?=[A-Z0-9-]*\d)(?=[A-Z0-9-]*[A-Z])[A-Z0-9-]{5,12})$/;

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
  const { texts, starts } = splitLines(input);
  // Keyword and negative-word matching is most of the work, and only the lines around a
  // candidate are ever looked at: analyse those, once each (a 4 KB newsletter full of numbers
  // went from ~500 to ~300 µs).
  const analysed: Array<Line | undefined> = [];
  const lines: LineAt = (index) => {
    const lineText = texts[index];
    return lineText === undefined ? undefined : (analysed[index] ??= analyse(lineText));
  };
  const found = new Map<string, Found>();
  // "Subject: Your sign-in code" over "Use 739201 to sign in.": the subject announces the code
  // the body gives without a keyword. Taken only when nothing else was found and the body has
  // exactly one such strong candidate (SUBJECT_ONLY_SHAPE), none vetoed by a negative word.
  const subjectAnnounces = (lines(0)?.keywords.length ?? 0) > 0 && (lines(0)?.negatives.length ?? 0) === 0;
  const announced = new Set<string>();
  let examined = 0;
  // One search over the whole input, not one per line: a candidate never spans a line break,
  // a line break bounds it as the start or end of a line would, and a search per line clones
  // the pattern even for an empty line (32 Ki blank lines made that the bulk of the work).
  let index = 0;
  for (const match of input.matchAll(CANDIDATE)) {
    examined += 1;
    if (examined > MAX_CODE_CANDIDATES) break;
    while ((starts[index + 1] ?? Number.POSITIVE_INFINITY) <= match.index) index += 1;
    const lineText = texts[index] ?? '';
    const start = match.index - (starts[index] ?? 0);
    const end = start + match[0].length;
    const shape = codeShape(match[0]);
    if (shape === null || isPartOfOtherNumber(lineText, start, end)) continue;
    const score = contextScore(lines, index, start, end, shape);
    if (score <= 0) {
      const line = lines(index);
      if (subjectAnnounces && index > 0 && line !== undefined && SUBJECT_ONLY_SHAPE.test(shape.code) && !negativeBefore(line, start) && !negativeAfter(line, end)) {
        announced.add(shape.code);
      }
      continue;
    }
    const total = score + SHAPE_BONUS(shape.code);
    const previous = found.get(shape.code);
    if (previous === undefined || previous.score < total) {
      found.set(shape.code, { code: shape.code, score: total, order: previous?.order ?? found.size });
    }
  }
  if (found.size === 0 && announced.size === 1) return [...announced];
  return [...found.values()]
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .slice(0, MAX_CODES)
    .map((entry) => entry.code);
}
