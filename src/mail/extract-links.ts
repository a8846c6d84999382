import { walkSanitizedHtml } from './html-walk.js';
import { VisibilityStack } from './visibility-stack.js';

/**
 * Most links returned. Sign-up and login mail has one to five; newsletters a few dozen.
 * Past 100, the rest is footer and tracking noise nobody reads in a list.
 */
export const MAX_LINKS = 100;

/**
 * Longest URL kept. Browsers and CDNs refuse much past 8 KiB; 2 048 is the long-standing
 * practical limit (and what sitemaps allow). A longer URL is skipped, never cut: a cut
 * URL leads somewhere else.
 */
export const MAX_URL_CHARS = 2048;

/** Longest visible text kept for a link: a button or a sentence, not a page. */
export const MAX_LINK_TEXT_CHARS = 300;

/**
 * Most characters of a text part read (HTML is read to `MAX_WALKED_HTML_CHARS`). Finding
 * bare URLs is one pattern over the text, cheap per character; the bound keeps it small.
 */
export const MAX_LINK_SCAN_CHARS = 2 * 1024 * 1024;

/** A link of a message: where it goes, and the text a reader sees on it (`""` when none). */
export interface MailLink {
  url: string;
  text: string;
}

/**
 * A bare http(s) URL in text; trailing punctuation is trimmed afterwards. Linear: one greedy
 * run of a character class with nothing after it to backtrack for, and the search resumes
 * after each match.
 */
const BARE_URL = /\bhttps?:\/\/[^\s<>"'`]+/giu;

/**
 * Punctuation that ends a sentence or closes a bracket around a URL rather than belonging to
 * it. Trimmed by a backward scan, never by a `[…]+$` pattern: that one is retried from every
 * position of a long run of such characters followed by anything else, quadratic in the run.
 */
const TRAILING_CHARS = '.,;:!?\'"»]}>】」）)';

/**
 * The same characters as a table by UTF-16 code unit: a URL cut at the sanitiser's bound can
 * end in a megabyte of them, and a table look-up per character keeps that scan at about a
 * millisecond where a `Set` of one-character strings took thirty.
 */
const TRAILING = new Uint8Array(0x10000);
for (const char of TRAILING_CHARS) TRAILING[char.charCodeAt(0)] = 1;

/** Elements whose boundaries separate words in what a reader sees. */
const BLOCK = new Set(['br', 'p', 'div', 'li', 'tr', 'td', 'th', 'table', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'img']);

const collapse = (text: string): string => text.replace(/\s+/gu, ' ').trim();

/** How many times `char` occurs in `text`. */
function count(text: string, char: string): number {
  let found = 0;
  for (let at = text.indexOf(char); at !== -1; at = text.indexOf(char, at + 1)) found += 1;
  return found;
}

function trimUrl(raw: string): string {
  let end = raw.length;
  while (end > 0 && TRAILING[raw.charCodeAt(end - 1)] === 1) end -= 1;
  const url = raw.slice(0, end);
  // A closing bracket belongs to the URL when it closes one opened inside it (Wikipedia links).
  return raw.charAt(end) === ')' && count(url, '(') > count(url, ')') ? `${url})` : url;
}

/** Collects links in order, first of each URL wins, within the bounds. */
class LinkList {
  readonly links: MailLink[] = [];
  private readonly seen = new Set<string>();

  get full(): boolean {
    return this.links.length >= MAX_LINKS;
  }

  add(url: string, text: string): void {
    if (this.full || url.length > MAX_URL_CHARS || !/^https?:\/\/[^/?#\s]/iu.test(url) || this.seen.has(url)) return;
    this.seen.add(url);
    this.links.push({ url, text: collapse(text).slice(0, MAX_LINK_TEXT_CHARS).trim() });
  }

  addBare(text: string): void {
    // The shortest URL (`http://x`) is eight characters; most runs between tags are shorter.
    if (text.length < 8) return;
    // exec with lastIndex rather than matchAll, which clones the pattern on every call: this
    // runs for the text between every two blocks of the HTML, mostly with no URL in it.
    BARE_URL.lastIndex = 0;
    for (let match = BARE_URL.exec(text); match !== null; match = BARE_URL.exec(text)) this.add(trimUrl(match[0]), '');
  }
}

/** An anchor being read: where it goes, its readable text, and whether a reader sees any of it. */
interface OpenAnchor {
  url: string;
  text: string;
  seen: boolean;
}

function fromHtml(html: string): MailLink[] {
  const list = new LinkList();
  const visibility = new VisibilityStack();
  let anchor: OpenAnchor | null = null;
  let outside = '';
  const flushOutside = (): void => {
    list.addBare(outside);
    outside = '';
  };
  const closeAnchor = (): void => {
    // A link nothing of which is seen (hidden, or no readable text and no image) is not listed.
    if (anchor?.seen === true) list.add(anchor.url, anchor.text);
    anchor = null;
  };
  walkSanitizedHtml(html, {
    open(name, attributes) {
      visibility.open(name, attributes);
      if (name === 'a') {
        flushOutside();
        closeAnchor();
        const href = attributes.href?.trim();
        // Only links the sanitiser kept carry an href; other schemes (mailto) are not listed.
        if (visibility.shown && href !== undefined && /^https?:\/\//iu.test(href)) anchor = { url: href, text: '', seen: false };
        return;
      }
      if (name === 'img' && anchor !== null && visibility.shown) anchor.seen = true;
      if (BLOCK.has(name)) {
        if (anchor !== null) anchor.text += ' ';
        else flushOutside();
      }
    },
    text(text) {
      if (!visibility.readable) return;
      if (anchor !== null) {
        if (text.trim() !== '') anchor.seen = true;
        // Enough to fill the text bound; the rest of a huge anchor is not kept.
        if (anchor.text.length < MAX_LINK_TEXT_CHARS * 2) anchor.text += text;
      } else {
        outside += text;
      }
    },
    close(name) {
      if (name === 'a') closeAnchor();
      else if (BLOCK.has(name) && anchor === null) flushOutside();
      visibility.close();
    },
  });
  flushOutside();
  closeAnchor();
  return list.links;
}

/**
 * The http(s) links of a message (docs/codes.md, "Links"): from its sanitised HTML (the
 * output of `sanitizeMailHtml`, so never a link the sanitiser removed), the anchors a reader
 * sees with their readable text, and bare URLs in the readable text with `""` (nothing
 * hidden: VisibilityStack); when there is no HTML, the bare URLs of the text. In document
 * order, first of each URL wins, at most `MAX_LINKS`.
 */
export function extractLinks(sanitizedHtml: string | null, text: string): MailLink[] {
  if (sanitizedHtml !== null && sanitizedHtml.trim() !== '') return fromHtml(sanitizedHtml);
  const list = new LinkList();
  list.addBare(text.slice(0, MAX_LINK_SCAN_CHARS));
  return list.links;
}
