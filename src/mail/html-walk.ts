import { decodeHTML } from 'entities';

/** What a walk over sanitised HTML reports: elements opening and closing around decoded text. */
export interface HtmlWalkHandler {
  /** An element opens; attribute names lower-cased, values with entities decoded, the first of a name wins. */
  open(name: string, attributes: Readonly<Record<string, string>>): void;
  /** Text between tags, entities decoded. */
  text(text: string): void;
  /** The innermost open element closes. Every `open` gets exactly one `close`. */
  close(name: string): void;
}

/**
 * Most characters of a message's sanitised HTML read to find its codes and links. Gmail
 * clips a message at about 100 KB; what sign-up and login mail asks the reader to see sits
 * at its top. Five times Gmail's clip keeps every real message whole and makes reading a
 * megabyte-sized hostile one cost what reading half of it does.
 */
export const MAX_WALKED_HTML_CHARS = 512 * 1024;

/** Elements that have no content and no end tag. */
const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'param', 'source', 'track', 'wbr']);

/** The attributes of an element that has none: shared, as most tags of mail carry none. */
const NO_ATTRIBUTES: Readonly<Record<string, string>> = Object.freeze({});

const decode = (text: string): string => (text.includes('&') ? decodeHTML(text) : text);

const isSpace = (code: number): boolean => code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d;

/** The attributes written between a tag's name and its `>`: `name="value"`, `name`, or `name=value`. */
function readAttributes(tag: string, from: number): Record<string, string> {
  const attributes: Record<string, string> = {};
  let at = from;
  while (at < tag.length) {
    while (at < tag.length && (isSpace(tag.charCodeAt(at)) || tag.charCodeAt(at) === 0x2f)) at += 1;
    const nameStart = at;
    while (at < tag.length && !isSpace(tag.charCodeAt(at)) && tag.charCodeAt(at) !== 0x3d && tag.charCodeAt(at) !== 0x2f) at += 1;
    if (at === nameStart) break;
    const name = tag.slice(nameStart, at).toLowerCase();
    let value = '';
    if (tag.charCodeAt(at) === 0x3d) {
      at += 1;
      const quote = tag.charCodeAt(at);
      if (quote === 0x22 || quote === 0x27) {
        const end = tag.indexOf(quote === 0x22 ? '"' : "'", at + 1);
        const close = end === -1 ? tag.length : end;
        value = decode(tag.slice(at + 1, close));
        at = close + 1;
      } else {
        const start = at;
        while (at < tag.length && !isSpace(tag.charCodeAt(at))) at += 1;
        value = decode(tag.slice(start, at));
      }
    }
    if (!Object.hasOwn(attributes, name)) attributes[name] = value;
  }
  return attributes;
}

/**
 * Walks HTML that the sanitiser wrote (sanitize-html.ts). Its output has one narrow form:
 * every `<` starts a tag and every `>` ends one (text and attribute values have them
 * escaped, attribute values are double-quoted with `"` escaped), there are no comments,
 * doctypes or raw-text elements, and every element that is not void has its end tag. So a
 * scan from `<` to `>` with `indexOf` reads it exactly, and costs a fraction of a general
 * HTML tokenizer, which looks at each character in turn: that was half of the 50 ms per MiB
 * that finding codes and links may cost, on a megabyte of small tags. It still holds on
 * input of another form, without reading it as a browser would: an end tag closes the
 * elements opened inside the one it names, one with no open element of its name is
 * skipped, `<!…>` is skipped, and the end of the input closes what is still open.
 *
 * At most `MAX_WALKED_HTML_CHARS` are read; a tag cut there is not read. `stop`, asked
 * after each piece of text, ends the walk early (its open elements still
 * close), so a reader that has enough pays only for what it read.
 */
export function walkSanitizedHtml(whole: string, handler: HtmlWalkHandler, stop: () => boolean = () => false): void {
  const html = whole.length > MAX_WALKED_HTML_CHARS ? whole.slice(0, MAX_WALKED_HTML_CHARS) : whole;
  const stack: string[] = [];
  let at = 0;
  while (at < html.length) {
    const open = html.indexOf('<', at);
    const textEnd = open === -1 ? html.length : open;
    if (textEnd > at) {
      handler.text(decode(html.slice(at, textEnd)));
      if (stop()) break;
    }
    if (open === -1) break;
    const end = html.indexOf('>', open + 1);
    // A tag cut off by the end of the input is not an element.
    if (end === -1) break;
    at = end + 1;
    const first = html.charCodeAt(open + 1);
    if (first === 0x2f) {
      // An end tag: the innermost element in sanitised HTML, matched in place.
      const top = stack.at(-1);
      if (top !== undefined && end - open - 2 === top.length && html.startsWith(top, open + 2)) {
        stack.pop();
        handler.close(top);
        continue;
      }
      const name = html.slice(open + 2, end).trim().toLowerCase();
      const depth = stack.lastIndexOf(name);
      if (depth !== -1) while (stack.length > depth) handler.close(stack.pop() ?? name);
      continue;
    }
    if (first === 0x21 || first === 0x3f) continue;
    let nameEnd = open + 1;
    while (nameEnd < end && !isSpace(html.charCodeAt(nameEnd)) && html.charCodeAt(nameEnd) !== 0x2f) nameEnd += 1;
    if (nameEnd === open + 1) {
      handler.text(decode(html.slice(open, end + 1)));
      continue;
    }
    const name = html.slice(open + 1, nameEnd).toLowerCase();
    handler.open(name, nameEnd === end ? NO_ATTRIBUTES : readAttributes(html.slice(nameEnd, end), 0));
    // HTML ignores the slash of `<div/>`: only void elements end where they start.
    if (VOID.has(name)) handler.close(name);
    else stack.push(name);
  }
  while (stack.length > 0) handler.close(stack.pop() ?? '');
}
