/**
 * An attachment kept as a range of the stored raw message instead of a second copy of its
 * bytes (docs/decisions/0036-attachments-as-ranges-of-the-raw-message.md). The parser records
 * a range only after decoding it with decodeRawRange and finding exactly the attachment's
 * bytes, so a read that decodes the same range gets the same bytes; anything else (nested
 * messages, quoted-printable parts, bytes the decoder would read differently) is stored whole.
 */

/** How the bytes of a range are turned back into the attachment: base64 (RFC 2045 §6.8), or as they are (7bit, 8bit, binary). */
export type RawRangeEncoding = 'base64' | 'identity';

/** Bytes `start` to `end` (exclusive) of the stored raw message, and how they are encoded. */
export interface RawRange {
  start: number;
  end: number;
  encoding: RawRangeEncoding;
}

/** The encodings a stored range may name; a row naming another is read as bytes (never guessed). */
export function isRawRangeEncoding(value: unknown): value is RawRangeEncoding {
  return value === 'base64' || value === 'identity';
}

/**
 * The attachment's bytes from the bytes of its range. Base64 by Node's decoder, which skips
 * line breaks and anything outside the alphabet; the parser checks that this gives the bytes
 * it decoded itself before it keeps a range.
 */
export function decodeRawRange(bytes: Uint8Array, encoding: RawRangeEncoding): Uint8Array {
  if (encoding === 'identity') return new Uint8Array(bytes);
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  const decoded = Buffer.from(text, 'base64');
  return new Uint8Array(decoded.buffer, decoded.byteOffset, decoded.byteLength);
}
