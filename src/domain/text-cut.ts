/** What cutText returns: the kept prefix, and whether anything was left out. */
export interface CutText {
  text: string;
  truncated: boolean;
}

const encoder = new TextEncoder();
/** A UTF-16 code unit is at most 3 bytes of UTF-8 (a surrogate pair, 2 units, is 4). */
const MAX_UTF8_BYTES_PER_UNIT = 3;

/**
 * The longest prefix of `text` that is at most `maxBytes` bytes of UTF-8, made of whole
 * characters (never half a multi-byte sequence or half a surrogate pair). Costs at most
 * `maxBytes` of work whatever the length of `text`.
 */
export function cutText(text: string, maxBytes: number): CutText {
  if (text.length * MAX_UTF8_BYTES_PER_UNIT <= maxBytes) return { text, truncated: false };
  // encodeInto writes only whole characters that fit, and says how many UTF-16 units it read.
  const { read } = encoder.encodeInto(text, new Uint8Array(maxBytes));
  return read >= text.length ? { text, truncated: false } : { text: text.slice(0, read), truncated: true };
}
