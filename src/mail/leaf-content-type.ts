/** `type/subtype` as RFC 2045 §5.1 tokens, at the start of a value. */
const TYPE_PREFIX = /^[a-z0-9!#$&^_.+-]{1,127}\/[a-z0-9!#$&^_.+-]{1,127}/;

/** A `text` type without a usable subtype: `text`, `text/`, `text;`, `text plain`. */
const BARE_TEXT = /^text(?![a-z0-9!#$&^_.+-])/;

/**
 * The media type a single (non-multipart) part is read as, from the lower-cased value the
 * MIME parser took from its Content-Type header. RFC 2045 §5.2: an absent or syntactically
 * invalid Content-Type means text/plain; so `text` without a subtype (old mailers write
 * it) and an empty value become text/plain and are shown as the body, not stored as an
 * unnamed binary attachment. A valid type followed by junk (`text/html charset=utf-8`, a
 * missing semicolon) keeps its type. Any other invalid value stays as it is and the part
 * is kept as an attachment (application/octet-stream): guessing that binary is text would
 * put it in the body.
 */
export function leafContentType(value: string): string {
  const type = value.trim().toLowerCase();
  const prefix = TYPE_PREFIX.exec(type);
  if (prefix !== null) return prefix[0];
  if (type === '' || BARE_TEXT.test(type)) return 'text/plain';
  return type;
}
