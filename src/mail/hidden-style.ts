/**
 * What an element's own markup does to whether a reader sees it (docs/codes.md, "What a
 * reader sees"): its `hidden` attribute and its inline style. Stylesheets are not read: the
 * sanitiser removes `<style>` and `class`, so the reading frame applies none either. Every
 * function here scans its input once, without patterns that could backtrack.
 */

/** How an element changes visibility for itself and what it contains; `undefined`: inherited unchanged. */
export interface ElementEffect {
  /** Takes the element and all it contains out of sight, for good (`display:none`, `opacity:0`, zero size, `hidden`). */
  removes: boolean;
  /** `visibility:hidden` (true) or `visible` (false); descendants may set it back. */
  invisible: boolean | undefined;
  /** Text drawn at font size 0 (true) or at a real size again (false). */
  zeroFont: boolean | undefined;
  /** Text drawn in a transparent colour (true) or a real one again (false). */
  transparent: boolean | undefined;
}

/** Elements a reader never sees the content of (the sanitiser drops them; this holds for any HTML). */
const NEVER_SHOWN = new Set(['template', 'style', 'script', 'noscript', 'head', 'title', 'iframe', 'object', 'svg', 'math', 'textarea', 'select']);

/** Whether an element's content is never shown, whatever its attributes (`<template>`, `<style>`…). */
export const hidesContent = (name: string): boolean => NEVER_SHOWN.has(name);

/** Longest style attribute read: real inline styles are a few hundred characters. */
const MAX_STYLE_CHARS = 4096;

/** Font sizes in units that do not scale with the parent's: they bring zero-size text back to a real size. */
const ABSOLUTE_UNITS = new Set(['px', 'pt', 'pc', 'cm', 'mm', 'q', 'in', 'rem', 'vw', 'vh', 'vmin', 'vmax']);

/** Font size keywords that are absolute (`smaller`/`larger` scale the parent's, so 0 stays 0). */
const SIZE_KEYWORDS = new Set(['xx-small', 'x-small', 'small', 'medium', 'large', 'x-large', 'xx-large', 'xxx-large']);

/** Overflow values that clip what does not fit in the box. */
const CLIPPING = new Set(['hidden', 'clip', 'scroll', 'auto']);

/** The declarations of an inline style that decide whether a reader sees an element; `undefined` when absent. */
export interface SeenStyle {
  display?: string;
  visibility?: string;
  opacity?: string;
  width?: string;
  height?: string;
  'max-width'?: string;
  'max-height'?: string;
  overflow?: string;
  'overflow-x'?: string;
  'overflow-y'?: string;
  font?: string;
  'font-size'?: string;
  color?: string;
}

/** The properties a SeenStyle holds: the others of a style attribute are not even lower-cased. */
const SEEN_PROPERTIES = new Set<string>([
  'display', 'visibility', 'opacity', 'width', 'height', 'max-width', 'max-height',
  'overflow', 'overflow-x', 'overflow-y', 'font', 'font-size', 'color',
]);

const isSeenProperty = (property: string): property is keyof SeenStyle => SEEN_PROPERTIES.has(property);

/**
 * The declarations of a style attribute that decide what a reader sees, lower-cased, later
 * ones winning, `!important` dropped, in one pass over the attribute. Splitting at `;` and
 * the first `:` is enough for inline styles without strings.
 */
export function readInlineStyle(style: string): SeenStyle {
  const seen: SeenStyle = {};
  const text = style.length > MAX_STYLE_CHARS ? style.slice(0, MAX_STYLE_CHARS) : style;
  for (let start = 0; start < text.length; ) {
    const semicolon = text.indexOf(';', start);
    const end = semicolon === -1 ? text.length : semicolon;
    const colon = text.indexOf(':', start);
    if (colon !== -1 && colon < end) {
      const property = text.slice(start, colon).trim().toLowerCase();
      if (isSeenProperty(property)) {
        let value = text.slice(colon + 1, end).trim().toLowerCase();
        const important = value.indexOf('!');
        if (important !== -1) value = value.slice(0, important).trim();
        if (value !== '') seen[property] = value;
      }
    }
    start = end + 1;
  }
  return seen;
}

const isDigitOrDot = (code: number): boolean => (code >= 0x30 && code <= 0x39) || code === 0x2e;

/** A CSS number with an optional unit (`0`, `.5em`, `12px`, `0%`), or null when the value is not one. */
function readLength(value: string): { amount: number; unit: string } | null {
  let end = 0;
  if (value[end] === '+' || value[end] === '-') end += 1;
  const digitsStart = end;
  while (end < value.length && isDigitOrDot(value.charCodeAt(end))) end += 1;
  if (end === digitsStart) return null;
  const amount = Number(value.slice(0, end));
  const unit = value.slice(end);
  if (!Number.isFinite(amount) || !/^(?:[a-z]{0,4}|%)$/.test(unit)) return null;
  return { amount, unit };
}

const isZeroLength = (value: string | undefined): boolean => value !== undefined && readLength(value)?.amount === 0;

/** What a font size does to zero-size text: true (makes it 0), false (a real size again), undefined (scales the parent's). */
function fontSizeEffect(value: string): boolean | undefined {
  if (SIZE_KEYWORDS.has(value)) return false;
  const length = readLength(value);
  if (length === null) return undefined;
  if (length.amount === 0) return true;
  return ABSOLUTE_UNITS.has(length.unit) ? false : undefined;
}

/** The font size inside a `font` shorthand (`bold 0/0 a`, `12px/1.5 Arial`): the first token that is a size. */
function fontShorthandSize(value: string): string | undefined {
  for (const token of value.split(/[\s,]+/)) {
    const size = token.split('/')[0] ?? '';
    if (SIZE_KEYWORDS.has(size) || size === 'smaller' || size === 'larger') return size;
    const length = readLength(size);
    // A unitless number other than 0 is a weight (700), not a size.
    if (length !== null && (length.unit !== '' || length.amount === 0)) return size;
  }
  return undefined;
}

/** Whether a colour is fully transparent: `transparent`, or an alpha of 0 (`rgba(0,0,0,0)`, `#0000`, `#ffffff00`). */
function isTransparentColor(value: string): boolean {
  if (value === 'transparent') return true;
  if (value.startsWith('#')) return (value.length === 5 && value.endsWith('0')) || (value.length === 9 && value.endsWith('00'));
  const open = value.indexOf('(');
  const close = value.lastIndexOf(')');
  if (open === -1 || close < open || !/^(?:rgba?|hsla?)$/.test(value.slice(0, open).trim())) return false;
  const inside = value.slice(open + 1, close);
  const slash = inside.indexOf('/');
  const parts = inside.split(',');
  const alpha = slash !== -1 ? inside.slice(slash + 1) : parts.length === 4 ? parts[3] : undefined;
  return alpha !== undefined && readLength(alpha.trim())?.amount === 0;
}

/** What a colour does to transparent text: true, false (a real colour again) or undefined (inherits). */
function colorEffect(value: string | undefined): boolean | undefined {
  if (value === undefined || value === 'inherit' || value === 'currentcolor' || value === 'unset') return undefined;
  return isTransparentColor(value);
}

/** What one element's `hidden` attribute and inline style do to whether it and its content are seen. */
export function elementEffect(name: string, attributes: Readonly<Record<string, string>>): ElementEffect {
  const style = readInlineStyle(attributes.style ?? '');
  const { display, opacity, visibility } = style;
  const clipsX = CLIPPING.has(style['overflow-x'] ?? style.overflow ?? '');
  const clipsY = CLIPPING.has(style['overflow-y'] ?? style.overflow ?? '');
  const removes =
    hidesContent(name) ||
    display === 'none' ||
    // The hidden attribute is `display:none` unless the element's own style shows it.
    ('hidden' in attributes && display === undefined) ||
    (opacity !== undefined && (readLength(opacity)?.amount ?? 1) <= 0) ||
    isZeroLength(style.width) ||
    isZeroLength(style.height) ||
    (clipsX && isZeroLength(style['max-width'])) ||
    (clipsY && isZeroLength(style['max-height']));
  const fontSize = style['font-size'] ?? fontShorthandSize(style.font ?? '');
  return {
    removes,
    invisible: visibility === 'hidden' || visibility === 'collapse' ? true : visibility === 'visible' ? false : undefined,
    zeroFont: fontSize === undefined ? undefined : fontSizeEffect(fontSize),
    transparent: colorEffect(style.color),
  };
}
