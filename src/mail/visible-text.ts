import { walkSanitizedHtml } from './html-walk.js';
import { VisibilityStack } from './visibility-stack.js';

/** Elements after which text starts on a new line. */
const LINE_BLOCKS = new Set([
  'address', 'article', 'aside', 'caption', 'center', 'dd', 'div', 'dt', 'figcaption', 'footer', 'header', 'li',
  'main', 'nav', 'section', 'tbody', 'tfoot', 'thead', 'tr',
]);

/** Elements set off by a blank line, as a text rendering of mail shows them. */
const PARAGRAPH_BLOCKS = new Set(['blockquote', 'dl', 'figure', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'ol', 'p', 'pre', 'table', 'ul']);

/** Table cells: side by side on their row, a space apart. */
const CELLS = new Set(['td', 'th']);

/** HTML's collapsible white space (not U+00A0, which a reader sees as a space that stays). */
const WHITESPACE = /[ \t\n\r\f]+/g;

/**
 * Collects lines of text, collapsing white space as a browser does, up to a size. The
 * current line is kept as pieces with its state in fields: asking a string built by `+=`
 * whether it ends with a space would flatten it on every call, quadratic in the line.
 */
class Lines {
  private readonly lines: string[] = [];
  private pieces: string[] = [];
  private lineEmpty = true;
  private endsWithSpace = false;
  private size = 0;
  /** 0: same line; 1: new line; 2: after a blank line. */
  private pendingBreak = 0;

  constructor(private readonly maxChars: number) {}

  get full(): boolean {
    return this.size >= this.maxChars;
  }

  /** Text as it appears in the HTML; `pre` keeps its line breaks and spaces. */
  add(text: string, preformatted: boolean): void {
    if (preformatted) {
      const [first = '', ...rest] = text.replace(/\r\n?/g, '\n').split('\n');
      this.append(first, true);
      for (const line of rest) {
        this.breakLine(1);
        this.append(line, true);
      }
      return;
    }
    const collapsed = text.replace(WHITESPACE, ' ');
    // A space at the start of a line, or after another, is not seen.
    this.append(this.lineEmpty || this.endsWithSpace ? collapsed.replace(/^ /, '') : collapsed, false);
  }

  /** Ends the line at the next text (1), with a blank line between (2). */
  breakLine(kind: 1 | 2): void {
    this.pendingBreak = Math.max(this.pendingBreak, kind);
  }

  /** A space between table cells, unless the line already ends in one. */
  space(): void {
    if (!this.lineEmpty && !this.endsWithSpace) this.append(' ', false);
  }

  toString(): string {
    return [...this.lines, this.pieces.join('').trimEnd()].join('\n').trim();
  }

  private append(text: string, preformatted: boolean): void {
    if (this.full) return;
    let piece = text;
    if (this.pendingBreak > 0) {
      // White space alone does not start the new line, and a new line starts with no space.
      if (!preformatted) piece = piece.replace(/^ /, '');
      if (piece === '') return;
      if (!this.lineEmpty || this.lines.length > 0) {
        this.push(this.pieces.join('').trimEnd());
        if (this.pendingBreak === 2) this.push('');
      }
      this.pieces = [];
      this.lineEmpty = true;
      this.pendingBreak = 0;
    }
    const kept = piece.slice(0, Math.max(0, this.maxChars - this.size));
    if (kept === '') return;
    this.pieces.push(kept);
    this.lineEmpty = false;
    this.endsWithSpace = kept.endsWith(' ');
    this.size += kept.length;
  }

  private push(line: string): void {
    this.lines.push(line);
    // The line break counts too, so that a bound on the size bounds the lines kept.
    this.size += 1;
  }
}

/**
 * The text a reader sees in a message's (sanitised) HTML, for finding its codes: nothing
 * inside an element hidden by `display:none`, `visibility:hidden`, the `hidden` attribute,
 * `opacity:0`, zero size or a zero font size or transparent colour (VisibilityStack), nor
 * inside `<template>`, `<style>` or `<script>`. Blocks start new lines, table cells of a row
 * are a space apart, white space collapses as in a browser, images contribute nothing. At
 * most `maxChars` characters; the walk stops there, so the cost is linear in the HTML read
 * and at most linear in all of it.
 */
export function visibleText(html: string, maxChars: number): string {
  const lines = new Lines(maxChars);
  const visibility = new VisibilityStack();
  let preformatted = 0;
  walkSanitizedHtml(
    html,
    {
      open(name, attributes) {
        visibility.open(name, attributes);
        if (!visibility.shown) return;
        if (name === 'br') lines.breakLine(1);
        else if (PARAGRAPH_BLOCKS.has(name)) lines.breakLine(2);
        else if (LINE_BLOCKS.has(name)) lines.breakLine(1);
        if (name === 'pre') preformatted += 1;
      },
      text(text) {
        if (visibility.readable) lines.add(text, preformatted > 0);
      },
      close(name) {
        if (visibility.shown) {
          if (PARAGRAPH_BLOCKS.has(name)) lines.breakLine(2);
          else if (LINE_BLOCKS.has(name)) lines.breakLine(1);
          else if (CELLS.has(name)) lines.space();
          if (name === 'pre') preformatted -= 1;
        }
        visibility.close();
      },
    },
    () => lines.full,
  );
  return lines.toString();
}
