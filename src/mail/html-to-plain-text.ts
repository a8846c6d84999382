import { compile, type FormatCallback } from 'html-to-text';
import { MAX_HTML_NESTING, MAX_SANITIZED_HTML_CHARS } from './sanitize-html.js';

const headings = ['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } }));

/**
 * A table cell's text followed by a word break, so cells of a row read "Item Price"
 * rather than html-to-text's default "ItemPrice" for tables it does not lay out.
 */
const tableCell: FormatCallback = (elem, walk, builder) => {
  walk(elem.children, builder);
  builder.addInline(' ');
};

// Compiled once: html-to-text builds its selector matcher per options object.
const convert = compile({
  // The reader's window wraps; hard line breaks would break long links.
  wordwrap: false,
  formatters: { tableCell },
  limits: {
    // Input is already sanitised and capped; this only keeps html-to-text from logging.
    maxInputLength: MAX_SANITIZED_HTML_CHARS,
    // html-to-text recurses per element; the sanitiser already flattened deeper markup.
    maxDepth: MAX_HTML_NESTING + 10,
  },
  selectors: [
    // Alt texts of logos, spacers and tracking pixels are clutter in a text view.
    { selector: 'img', format: 'skip' },
    // Keep link targets (confirmation links are why people use a temporary inbox).
    { selector: 'a', options: { hideLinkHrefIfSameAsText: true } },
    ...headings,
    // Layout tables are the norm in mail: one line per row, cells separated by spaces.
    { selector: 'table', format: 'block' },
    { selector: 'tr', format: 'block', options: { leadingLineBreaks: 1, trailingLineBreaks: 1 } },
    { selector: 'td', format: 'tableCell' },
    { selector: 'th', format: 'tableCell' },
  ],
});

/** Readable plain text of a message's (sanitised) HTML, for messages without a text part. */
export function htmlToPlainText(html: string): string {
  return convert(html).trim();
}
