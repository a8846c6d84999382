/** A MIME type we are willing to echo back: `type/subtype` tokens only, else octet-stream. */
const CONTENT_TYPE_PATTERN = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,127}$/;

/**
 * Content-Type for a download. Parameters are dropped and anything malformed becomes
 * application/octet-stream; with `attachment` + `nosniff` the browser never renders it.
 */
export function safeContentType(contentType: string): string {
  const base = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  return CONTENT_TYPE_PATTERN.test(base) ? base : 'application/octet-stream';
}

/** `attachment` with an ASCII fallback name and the UTF-8 name per RFC 6266 / RFC 5987. */
export function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, '_') || 'download';
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}
