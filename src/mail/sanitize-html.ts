import sanitizeHtml from 'sanitize-html';
import { boundHtmlNesting } from './html-nesting-guard.js';

/**
 * Longest HTML we sanitise, in UTF-16 units. Sanitising is linear but not cheap (a parse
 * plus a CSS parse per style attribute: ~0.5 s per MiB of styled tags); 1 MiB is ten times
 * the size at which Gmail clips a message, and the raw message is stored anyway, so a
 * longer body is cut rather than costing seconds of CPU.
 */
export const MAX_HTML_CHARS = 1024 * 1024;

/**
 * Longest sanitised HTML returned. Output can outgrow the input (`<a></a>` gains
 * target/rel, `<td>` gains its end tag), and it is stored and sent with the message.
 */
export const MAX_SANITIZED_HTML_CHARS = 2 * MAX_HTML_CHARS;

/**
 * Deepest element nesting kept. Real mail layouts nest tables perhaps 20 deep; deeper
 * trees only serve to make renderers and html-to-text (which recurses) slow or overflow.
 * Tags below this depth are dropped; their text is kept.
 */
export const MAX_HTML_NESTING = 100;

/** Formatting tags mail actually uses; everything else is dropped (its text kept). */
const ALLOWED_TAGS = [
  'a', 'abbr', 'address', 'article', 'aside', 'b', 'bdi', 'bdo', 'big', 'blockquote', 'br',
  'caption', 'center', 'cite', 'code', 'col', 'colgroup', 'dd', 'del', 'dfn', 'div', 'dl', 'dt',
  'em', 'figcaption', 'figure', 'font', 'footer', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header',
  'hr', 'i', 'img', 'ins', 'kbd', 'li', 'main', 'mark', 'nav', 'ol', 'p', 'pre', 'q', 's',
  'samp', 'section', 'small', 'span', 'strike', 'strong', 'sub', 'sup', 'table', 'tbody', 'td',
  'tfoot', 'th', 'thead', 'tr', 'tt', 'u', 'ul', 'var', 'wbr',
];

/**
 * Disallowed tags whose *content* goes too: code (script, style), embedded documents
 * (iframe, object, svg, math), form values, and raw-text elements whose content is not
 * markup. Other disallowed tags (form, button, body…) lose the tag but keep their text.
 */
const DROPPED_WITH_CONTENT = [
  'script', 'style', 'noscript', 'template', 'title', 'iframe', 'frame', 'frameset', 'noframes',
  'object', 'embed', 'applet', 'svg', 'math', 'textarea', 'select', 'option', 'datalist',
  'xmp', 'noembed', 'plaintext', 'canvas',
];

/**
 * Presentational attributes harmless on any element (no URLs, no script). `hidden` stays so
 * that what the sender hid stays hidden in the reading frame, as codes are found only in
 * what a reader sees (visible-text.ts).
 */
const GLOBAL_ATTRIBUTES = ['style', 'title', 'dir', 'lang', 'align', 'valign', 'width', 'height', 'bgcolor', 'border', 'hidden'];

// No id/name/class: they let a message clobber DOM globals or borrow the app's own CSS.
const ALLOWED_ATTRIBUTES: Record<string, string[]> = {
  '*': GLOBAL_ATTRIBUTES,
  a: ['href', 'target', 'rel'],
  img: ['src', 'alt', 'hspace', 'vspace'],
  table: ['cellpadding', 'cellspacing', 'summary'],
  td: ['colspan', 'rowspan', 'nowrap', 'abbr', 'scope'],
  th: ['colspan', 'rowspan', 'nowrap', 'abbr', 'scope'],
  col: ['span'],
  colgroup: ['span'],
  font: ['color', 'face', 'size'],
  hr: ['size', 'noshade', 'color'],
  ol: ['start', 'type', 'reversed'],
  ul: ['type'],
  li: ['value', 'type'],
};

const LINK_SCHEMES = ['http', 'https', 'mailto'];
const IMAGE_SCHEMES = ['http', 'https', 'cid', 'data'];

/** Raster image types allowed in `data:` image sources; SVG is not (it can carry script). */
const DATA_IMAGE = /^data:image\/(?:png|gif|jpeg|jpg|webp|bmp)[;,]/i;

/**
 * A CSS value made only of words, numbers, units, colours, quotes, commas and the colour/
 * calc functions. Anything else fails: `url(`, `image-set(`, `expression(`, `@import`,
 * `javascript:` (no colon allowed), `\` escapes, comments (no `*`), braces and semicolons.
 */
const SAFE_CSS_VALUE = /^(?![\s\S]*\b(?:url|expression|javascript|import|image|element|src)\b)(?:[\p{L}\p{N}_\s#%.,!'"+/-]|\b(?:rgba?|hsla?|calc)\(|\))*$/u;

const STYLED_PROPERTIES = [
  'color', 'background-color',
  'font', 'font-family', 'font-size', 'font-style', 'font-weight', 'font-variant',
  'text-align', 'text-decoration', 'text-transform', 'letter-spacing',
  'padding', 'padding-top', 'padding-right', 'padding-bottom', 'padding-left',
  'margin', 'margin-top', 'margin-right', 'margin-bottom', 'margin-left',
  'border', 'border-top', 'border-right', 'border-bottom', 'border-left',
  'border-color', 'border-style', 'border-width', 'border-radius', 'border-collapse', 'border-spacing',
  'width', 'height', 'max-width', 'display', 'line-height', 'vertical-align', 'white-space',
  // What hides text from a reader: kept so that the frame hides what the sender hid, as the
  // code finder does (hidden-style.ts).
  'visibility', 'opacity', 'max-height', 'overflow', 'overflow-x', 'overflow-y',
];

const ALLOWED_STYLES = {
  '*': Object.fromEntries(STYLED_PROPERTIES.map((property) => [property, [SAFE_CSS_VALUE]])),
};

/**
 * `value` without C0 controls and spaces at either end, by scanning in from each end. Not
 * `/[\u0000-\u0020]+$/`: that pattern is retried from every position of a long run of
 * spaces that something else follows, quadratic in the run (an `href` of 64 Ki spaces and
 * a letter cost seconds).
 */
function trimC0AndSpace(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && value.charCodeAt(start) <= 0x20) start += 1;
  while (end > start && value.charCodeAt(end - 1) <= 0x20) end -= 1;
  return value.slice(start, end);
}

/**
 * The scheme of a URL attribute as a browser would read it (it ignores TAB/LF/CR anywhere
 * and C0/space at either end), or null when the URL is relative or has stray controls.
 * Relative URLs are refused: they would resolve against *our* origin, so an
 * `<img src="/api/…">` would make the reader's browser call our API with their cookie.
 */
function absoluteScheme(value: string): { scheme: string; url: string } | null {
  // Browsers strip TAB, LF and CR anywhere before parsing a URL.
  const url = trimC0AndSpace(value.replace(/[\t\n\r]/g, ''));
  // eslint-disable-next-line no-control-regex -- any other control makes the scheme unreliable
  if (/[\u0000-\u001F\u007F]/.test(url)) return null;
  const match = /^([a-z][a-z0-9+.-]*):/i.exec(url);
  return match?.[1] === undefined ? null : { scheme: match[1].toLowerCase(), url };
}

function linkTransform(_tag: string, attribs: sanitizeHtml.Attributes): sanitizeHtml.Tag {
  const next: sanitizeHtml.Attributes = { ...attribs, target: '_blank', rel: 'noopener noreferrer' };
  const href = attribs.href === undefined ? null : absoluteScheme(attribs.href);
  if (href === null || !LINK_SCHEMES.includes(href.scheme)) delete next.href;
  return { tagName: 'a', attribs: next };
}

function imageTransform(_tag: string, attribs: sanitizeHtml.Attributes): sanitizeHtml.Tag {
  const next: sanitizeHtml.Attributes = { ...attribs };
  const src = attribs.src === undefined ? null : absoluteScheme(attribs.src);
  const allowed = src !== null && IMAGE_SCHEMES.includes(src.scheme) && (src.scheme !== 'data' || DATA_IMAGE.test(src.url));
  if (!allowed) delete next.src;
  return { tagName: 'img', attribs: next };
}

const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: ALLOWED_TAGS,
  allowedAttributes: ALLOWED_ATTRIBUTES,
  // `<span hidden>` has an empty value, which sanitize-html drops for the attributes it
  // lists as non-boolean (`hidden` among them, for `hidden="until-found"`).
  nonBooleanAttributes: sanitizeHtml.defaults.nonBooleanAttributes.filter((name) => name !== 'hidden'),
  allowedStyles: ALLOWED_STYLES,
  nonTextTags: DROPPED_WITH_CONTENT,
  disallowedTagsMode: 'discard',
  allowedSchemes: LINK_SCHEMES,
  allowedSchemesByTag: { a: LINK_SCHEMES, img: IMAGE_SCHEMES },
  allowProtocolRelative: false,
  allowVulnerableTags: false,
  nestingLimit: MAX_HTML_NESTING,
  transformTags: { a: linkTransform, img: imageTransform },
};

/**
 * Makes a message's HTML safe to show in the reader's browser: formatting tags and a
 * whitelist of inline styles only; no script, no event handlers, no embedded documents,
 * no forms, no `<style>`/`<meta>`/`<base>`, only absolute http(s)/mailto links (opened in a
 * new tab without an opener) and http(s)/cid/raster-`data:` images.
 */
export function sanitizeMailHtml(html: string): string {
  const bounded = boundHtmlNesting(html.length > MAX_HTML_CHARS ? html.slice(0, MAX_HTML_CHARS) : html);
  const clean = sanitizeHtml(bounded, OPTIONS);
  // Every `<` in sanitised output starts a tag (text and attribute values are escaped), so
  // cutting before one never leaves half a tag; browsers close what is left open.
  return clean.length > MAX_SANITIZED_HTML_CHARS ? clean.slice(0, clean.lastIndexOf('<', MAX_SANITIZED_HTML_CHARS)) : clean;
}
