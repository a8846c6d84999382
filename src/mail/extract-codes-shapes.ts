import { CURRENCY_BEFORE, UNIT_AFTER } from './extract-codes-words.js';

/** Letters and digits of the scripts that write words with spaces between them. */
const WORD_CHAR = String.raw`[\p{Script=Latin}\p{Script=Cyrillic}\p{Script=Greek}\p{N}_]`;

/**
 * A token shaped like a code (docs/codes.md, "Shapes"), tried in this order:
 * single digits with spaces (digits in boxes), pairs ("71 84 26"), two groups of 3 or 4
 * digits ("123 456", "4417-2290"), a letter and digits ("G-482913"), upper-case letter and
 * digit groups joined by hyphens ("A7K-3Q9"), and one run of 4–10 upper-case letters and
 * digits. It may not touch a word character, a hyphen, or a sign that makes it part of
 * something else (`#` number, `+` phone, `@` address, `&`/`=` query string).
 * CJK characters may touch it: CJK text has no spaces ("验证码481029").
 */
export const CANDIDATE = new RegExp(
  `(?<!${WORD_CHAR}|[-#№+@&=])(?:` +
    [
      String.raw`\d(?: \d){3,7}`,
      String.raw`\d{2}(?: \d{2}){2,3}`,
      String.raw`\d{3,4}[ -]\d{3,4}`,
      String.raw`[A-Z]-\d{4,8}`,
      String.raw`[A-Z0-9]{2,8}(?:-[A-Z0-9]{2,8}){1,3}`,
      String.raw`[A-Z0-9]{4,10}`,
    ].join('|') +
    `)(?!${WORD_CHAR}|-)`,
  'gu',
);

/** Fewest and most digits of a numeric code: below 4 is a count, above 8 an account or parcel number. */
const MIN_DIGITS = 4;
const MAX_DIGITS = 8;

/** Years a 4-digit number is taken for unless a keyword sits right before it. */
const YEAR = /^(?:19[5-9]\d|20\d\d)$/;

/** An 8-digit date: YYYYMMDD or DDMMYYYY. */
const DATE_8 = /^(?:(?:19|20)\d\d(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\d|3[01])|(?:0[1-9]|[12]\d|3[01])(?:0[1-9]|1[0-2])(?:19|20)\d\d)$/;

/** A code as found: what a person types, and whether it could also be a year. */
export interface CodeShape {
  code: string;
  yearLike: boolean;
}

function digitGroups(raw: string, separator: string): CodeShape | null {
  const groups = raw.split(separator);
  const code = groups.join('');
  if (code.length < MIN_DIGITS || code.length > MAX_DIGITS) return null;
  const single = groups.every((group) => group.length === 1);
  const equal = groups.every((group) => group.length === groups[0]?.length);
  // "123 456" or "4417-2290" is one code; "555-0199" or "0800 123" is a phone number.
  if (!single && !(equal && code.length >= 6)) return null;
  return { code, yearLike: false };
}

/**
 * The code a person would type for a candidate token, or null when its shape is not a
 * code's: spaces and hyphens between digit groups are dropped ("123 456" → "123456"),
 * hyphens in codes with letters are kept ("A7K-3Q9", "G-482913").
 */
export function codeShape(raw: string): CodeShape | null {
  if (/^[\d ]+$/.test(raw)) {
    if (raw.includes(' ')) return digitGroups(raw, ' ');
    if (raw.length < MIN_DIGITS || raw.length > MAX_DIGITS) return null;
    if (raw.length === 8 && DATE_8.test(raw)) return null;
    return { code: raw, yearLike: raw.length === 4 && YEAR.test(raw) };
  }
  if (/^[\d-]+$/.test(raw)) return digitGroups(raw, '-');
  // Letters and digits: at least one of each, or it is a word ("VERIFY") or an acronym.
  if (!/\d/.test(raw) || !/[A-Z]/.test(raw)) return null;
  return { code: raw, yearLike: false };
}

/**
 * Whether the token at `start`–`end` of `line` is part of a larger number or a quantity:
 * a time or date ("09:41", "22.11.2026"), a decimal or thousands ("1,204"), a longer
 * digit sequence with spaces ("0532 0130 00"), a price or an amount with a unit.
 */
export function isPartOfOtherNumber(line: string, start: number, end: number): boolean {
  const before = line.slice(Math.max(0, start - 8), start);
  const after = line.slice(end, end + 12);
  if (/\d[.,:/]$/.test(before) || /^[.,:/]\d/.test(after)) return true;
  if (/\d[ ]$/.test(before) || /^[ ]\d/.test(after)) return true;
  return CURRENCY_BEFORE.test(before) || UNIT_AFTER.test(after);
}
