import { cleanUrl } from './clean-url.js';

/** The sanitised mail HTML as the reading frame shows it, and how many remote loads were held back. */
export interface PreparedMail {
  srcdoc: string;
  blockedRemote: number;
}

/** Elements that load, embed, run or submit something: removed with their content. */
const DROPPED = 'script,noscript,template,iframe,frame,frameset,object,embed,applet,portal,meta,link,base,style,form,input,button,textarea,select,option,svg,math,video,audio,source,track,picture,canvas';
/** Attributes that name something to fetch or run besides the ones handled one by one. */
const DROPPED_ATTRIBUTES = new Set(['srcset', 'srcdoc', 'formaction', 'action', 'ping', 'poster', 'lowsrc', 'dynsrc', 'longdesc', 'usemap', 'xlink:href', 'xmlns', 'id', 'name', 'class']);
/** What may be linked to from mail. */
const LINK_SCHEME = /^(?:https?|mailto):/i;
/** Remote images a person may choose to load. */
const REMOTE = /^https?:\/\//i;
/** Inline raster images; SVG can carry script. */
const DATA_IMAGE = /^data:image\/(?:png|gif|jpe?g|webp|bmp)[;,]/i;
/** Anything in CSS that loads a resource. */
const CSS_LOADS = /url\s*\(|image-set\s*\(|@import|expression\s*\(/i;

/**
 * A remote URL on this page's own origin: mail must never make the reader call the API, nor
 * put them one click from it (the server refuses navigations to its state-changing routes
 * too). Unparseable counts as ours: dropped.
 */
function isOwnOrigin(url: string): boolean {
  try {
    return new URL(url).origin === location.origin;
  } catch {
    return true;
  }
}

/** The frame's own policy: nothing loads but inline images, unless the reader chose to show images. */
export function frameCsp(showRemote: boolean): string {
  const images = showRemote ? 'data: http: https:' : 'data:';
  return `default-src 'none'; img-src ${images}; style-src-attr 'unsafe-inline'; base-uri 'none'; form-action 'none'`;
}

/**
 * The frame's base look, as a style *attribute*: the page CSP allows no inline style
 * elements, and the frame inherits it. Mail is designed for a white page, so it gets one
 * in dark mode too, as mail apps do.
 */
const BODY_STYLE = 'margin:0;padding:16px;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;background:#fff;overflow-wrap:anywhere';
/** Keeps wide images inside the frame. */
const IMAGE_STYLE = ';max-width:100%;height:auto';

/**
 * Turns a message's HTML (already sanitised by the server, and still treated as hostile) into
 * a complete document for a sandboxed `srcdoc` frame. Parsing with DOMParser is inert: no
 * script runs and nothing loads while we edit. Remote images and CSS that loads anything are
 * held back until `showRemote`, so tracking pixels do not fire on open; links open in a new
 * tab without opener or referrer, and links to this page's own origin lose their target;
 * anything that loads, runs or submits is removed.
 */
export function prepareMailHtml(html: string, showRemote: boolean): PreparedMail {
  const doc = new DOMParser().parseFromString(html, 'text/html');
  let blockedRemote = 0;
  for (const element of Array.from(doc.querySelectorAll(DROPPED))) element.remove();
  for (const element of Array.from(doc.body.querySelectorAll('*'))) {
    for (const attribute of Array.from(element.attributes)) {
      const name = attribute.name.toLowerCase();
      if (name.startsWith('on') || DROPPED_ATTRIBUTES.has(name) || /javascript:|vbscript:/i.test(cleanUrl(attribute.value))) {
        element.removeAttribute(attribute.name);
      }
    }
    const style = element.getAttribute('style');
    // Never restored: the server's sanitiser drops these too, so no real mail depends on them.
    if (style !== null && CSS_LOADS.test(style)) element.removeAttribute('style');
    const background = element.getAttribute('background');
    if (background !== null) {
      const url = cleanUrl(background);
      if (!showRemote || !REMOTE.test(url) || isOwnOrigin(url)) element.removeAttribute('background');
      if (REMOTE.test(url) && !showRemote) blockedRemote += 1;
    }
    if (element.tagName === 'IMG') {
      const src = cleanUrl(element.getAttribute('src') ?? '');
      if (REMOTE.test(src) && !isOwnOrigin(src)) {
        if (!showRemote) {
          element.removeAttribute('src');
          element.setAttribute('data-blocked', '');
          blockedRemote += 1;
        }
      } else if (!DATA_IMAGE.test(src)) {
        element.removeAttribute('src');
      }
      element.setAttribute('style', `${element.getAttribute('style') ?? ''}${IMAGE_STYLE}`);
    }
    if (element.tagName === 'A') {
      const href = cleanUrl(element.getAttribute('href') ?? '');
      if (!LINK_SCHEME.test(href) || (REMOTE.test(href) && isOwnOrigin(href))) element.removeAttribute('href');
      element.setAttribute('target', '_blank');
      element.setAttribute('rel', 'noopener noreferrer');
    }
  }
  const head = `<meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${frameCsp(showRemote)}"><meta name="referrer" content="no-referrer"><meta name="color-scheme" content="light">`;
  const body = doc.body.innerHTML;
  return { srcdoc: `<!doctype html><html><head>${head}</head><body style='${BODY_STYLE}'>${body}</body></html>`, blockedRemote };
}
