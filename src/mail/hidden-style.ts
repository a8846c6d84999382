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

/**
 * The declarations of a style attribute, lower-cased, later ones winning, `!important`
 * dropped. Splitting at `;` and the first `:` is enough for inline styles without strings.
 */
export function readInlineStyle(style: string): Map<string, string> {
  const declarations = new Map<string, string>();
  for (const declaration of style.slice(0, MAX_STYLE_CHARS).split(';')) {
    const colon = declaration.indexOf(':');
    if (colon === -1) continue;
    const property = declaration.slice(0, colon).trim().toLowerCase();
    let value = declaration.slice(colon + 1).trim().toLowerCase();
    const important = value.indexOf('!');
    if (important !== -1) value = value.slice(0, important).trim();
    if (property !== '' && value !== '') declarations.set(property, value);
  }
  return declarations;
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
  const display = style.get('display');
  const opacity = style.get('opacity');
  const clipsX = CLIPPING.has(style.get('overflow-x') ?? style.get('overflow') ?? '');
  const clipsY = CLIPPING.has(style.get('overflow-y') ?? style.get('overflow') ?? '');
  const removes =
    hidesContent(name) ||
    display === 'none' ||
    // The hidden attribute is `display:none` unless the element's own style shows it.
    ('hidden' in attributes && display === undefined) ||
    (opacity !== undefined && (readLength(opacity)?.amount ?? 1) <= 0) ||
    isZeroLength(style.get('width')) ||
    isZeroLength(style.get('height')) ||
    (clipsX && isZeroLength(style.get('max-width'))) ||
    (clipsY && isZeroLength(style.get('max-height')));
  const visibility = style.get('visibility');
  const fontSize = style.get('font-size') ?? fontShorthandSize(style.get('font') ?? '');
  return {
    removes,
    invisible: visibility === 'hidden' || visibility === 'collapse' ? true : visibility === 'visible' ? false : undefined,
    zeroFont: fontSize === undefined ? undefined : fontSizeEffect(fontSize),
    transparent: colorEffect(style.get('color')),
  };
}
