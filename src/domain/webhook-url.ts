/**
 * Longest webhook URL accepted, in characters, before and after normalisation: enough for
 * any receiver's path and query (common browsers and servers cap URLs at 2–8 KiB), and a
 * bound on what every inbox's webhook row and attempt keep.
 */
export const WEBHOOK_URL_MAX_LENGTH = 2048;

/** A webhook URL that passed the syntax rules; where its host points is the guard's question. */
export interface WebhookUrl {
  /** The URL in WHATWG normal form (punycode host, percent-encoded path), as stored and posted to. */
  href: string;
  protocol: 'http:' | 'https:';
  /** The host name or address literal, without the brackets of an IPv6 literal. */
  hostname: string;
  /** `Host` header value: the host as written in the URL, with the port when it is not the default. */
  hostHeader: string;
  port: number;
  /** Path and query, as the request line carries them. */
  path: string;
}

/** The URL rules' verdict: the parsed URL, or why it is not a webhook URL (for `invalid_request`). */
export type WebhookUrlVerdict = { ok: true; url: WebhookUrl } | { ok: false; reason: string };

/**
 * True when `text` has a control character or a space, which the URL parser would silently
 * drop or trim: a URL that only works after such repair is refused rather than posted
 * somewhere the owner did not write.
 */
function hasInvisible(text: string): boolean {
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code <= 0x20 || code === 0x7f) return true;
  }
  return false;
}

/**
 * The syntax rules of a webhook URL: `http` or `https` (whose parser requires a host), no user
 * name or password, at most WEBHOOK_URL_MAX_LENGTH characters. Pure: no look-up; the destination guard decides
 * whether the host may be reached.
 */
export function parseWebhookUrl(raw: string): WebhookUrlVerdict {
  if (raw.length === 0) return { ok: false, reason: 'The webhook URL is empty.' };
  if (raw.length > WEBHOOK_URL_MAX_LENGTH) return { ok: false, reason: `The webhook URL is longer than ${WEBHOOK_URL_MAX_LENGTH} characters.` };
  if (hasInvisible(raw)) return { ok: false, reason: 'The webhook URL contains spaces or control characters.' };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: 'The webhook URL is not a valid absolute URL.' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { ok: false, reason: 'A webhook URL must start with http:// or https://.' };
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'A webhook URL may not contain a user name or password.' };
  if (url.href.length > WEBHOOK_URL_MAX_LENGTH) return { ok: false, reason: `The webhook URL is longer than ${WEBHOOK_URL_MAX_LENGTH} characters once normalised.` };
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return {
    ok: true,
    url: {
      href: url.href,
      protocol: url.protocol,
      hostname,
      hostHeader: url.host,
      port: url.port === '' ? (url.protocol === 'https:' ? 443 : 80) : Number(url.port),
      path: `${url.pathname}${url.search}`,
    },
  };
}
