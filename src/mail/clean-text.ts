/**
 * Text hygiene for everything the parser hands to the database and the API: no NUL (which
 * PostgreSQL rejects in `text`), no other control characters, no unpaired surrogates (which
 * do not encode as UTF-8), and a hard length cap applied *before* any regex work so a
 * hostile value costs at most `maxChars` of scanning.
 */

// C0 controls except TAB, LF, CR, and DEL (C1 is handled by repairC1 first).
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_KEEP_WHITESPACE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/g;

// Every C0 control and DEL: a one-line value (subject, header) keeps none of them.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_ALL = /[\u0000-\u001F\u007F]+/g;

const C1 = /[\u0080-\u009F]/g;

/**
 * What bytes 0x80–0x9F mean in windows-1252 (WHATWG index; '' for the five it leaves
 * undefined). Node's TextDecoder decodes windows-1252, and so latin1/us-ascii labels,
 * as ISO-8859-1 (nodejs/node#56542), turning Outlook's smart quotes and € into C1
 * controls. Real mail never means a C1 control, so they are mapped back, not dropped.
 */
const WINDOWS_1252_C1 = [
  '\u20AC', '', '\u201A', '\u0192', '\u201E', '\u2026', '\u2020', '\u2021',
  '\u02C6', '\u2030', '\u0160', '\u2039', '\u0152', '', '\u017D', '',
  '', '\u2018', '\u2019', '\u201C', '\u201D', '\u2022', '\u2013', '\u2014',
  '\u02DC', '\u2122', '\u0161', '\u203A', '\u0153', '', '\u017E', '\u0178',
];

/** Replaces C1 controls with the windows-1252 characters they were meant to be. */
export function repairC1(value: string): string {
  return value.replace(C1, (char) => WINDOWS_1252_C1[char.charCodeAt(0) - 0x80] ?? '');
}

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** Cuts `value` to at most `maxChars` UTF-16 units without splitting a surrogate pair. */
export function truncate(value: string, maxChars: number): string {
  if (value.length <= maxChars) return value;
  const end = maxChars > 0 && isHighSurrogate(value.charCodeAt(maxChars - 1)) ? maxChars - 1 : maxChars;
  return value.slice(0, Math.max(0, end));
}

/** Multi-line text (a body): keeps TAB/LF/CR, drops other controls, caps the length. */
export function cleanText(value: string, maxChars: number): string {
  return stripControls(truncate(value, maxChars));
}

/**
 * Any character stripControls may change: a control other than TAB, LF and CR, DEL, C1, or a
 * surrogate (paired or not). Most bodies have none, and one scan for them replaces three.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const MAY_NEED_STRIPPING = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\uD800-\uDFFF]/;

/** Like cleanText without the cap, for output whose size is bounded by its producer. */
export function stripControls(value: string): string {
  if (!MAY_NEED_STRIPPING.test(value)) return value;
  return repairC1(value).replace(CONTROL_KEEP_WHITESPACE, '').replace(LONE_SURROGATE, '\uFFFD');
}

/**
 * One-line text (subject, header value, address): every control run, line breaks
 * included, becomes one space, so a decoded `=0D=0A` cannot forge a line; then trimmed.
 */
export function cleanLine(value: string, maxChars: number): string {
  return repairC1(truncate(value, maxChars)).replace(CONTROL_ALL, ' ').replace(LONE_SURROGATE, '\uFFFD').trim();
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
