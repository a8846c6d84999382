import type { MessageLink } from '@tempinbox/client';

/** Links listed under a message: a sign-up mail has a few; a newsletter's hundred help nobody. */
export const MAX_LINKS_SHOWN = 50;

/** A link as the page lists it: an absolute http(s) URL and the words to show. */
export interface ShownLink {
  href: string;
  text: string;
  /**
   * The URL is on this page's own origin (the app and its API): shown as text, never as a
   * link, so a mail can never have the reader's browser call the API.
   */
  own: boolean;
}

/**
 * The message's links that are safe to offer: only absolute `http:`/`https:` URLs (never
 * `javascript:`, `data:` or a relative one that would point at this page's own origin),
 * without duplicates, at most MAX_LINKS_SHOWN; those on `ownOrigin` (this page's, e.g.
 * `https://tempinbox.test`) are marked `own`. The server already filters; the page does not
 * rely on it.
 */
export function safeLinks(links: readonly MessageLink[] | undefined, ownOrigin: string): ShownLink[] {
  const shown: ShownLink[] = [];
  const seen = new Set<string>();
  for (const link of links ?? []) {
    if (shown.length === MAX_LINKS_SHOWN) break;
    if (typeof link?.url !== 'string') continue;
    let url: URL;
    try {
      url = new URL(link.url);
    } catch {
      continue;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') continue;
    if (seen.has(url.href)) continue;
    seen.add(url.href);
    const text = typeof link.text === 'string' ? link.text.trim() : '';
    shown.push({ href: url.href, text: text === '' ? url.href : text, own: url.origin === ownOrigin });
  }
  return shown;
}
