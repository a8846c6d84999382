const EQUALS = 0x3d;
const CR = 0x0d;
const LF = 0x0a;
const SPACE = 0x20;
const TAB = 0x09;

function hexValue(byte: number | undefined): number {
  if (byte === undefined) return -1;
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x41 + 10;
  // Lower case is not allowed by RFC 2045 §6.7 (1), but a robust decoder accepts it.
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x61 + 10;
  return -1;
}

/**
 * Decodes a quoted-printable body to its exact octets (RFC 2045 §6.7): `=XX` becomes the
 * octet, a `=` at the end of a line is a soft line break and is removed with the break,
 * blanks at the end of a line were added in transport and are dropped (rule 3), and a hard
 * line break stays the bytes it was (CRLF stays CRLF; a bare LF of a LF-only message stays
 * LF). A `=` that starts no valid escape is kept as it is (the rule 1 robustness advice).
 */
export function decodeQuotedPrintable(body: Uint8Array): Uint8Array {
  const out = new Uint8Array(body.length);
  let length = 0;
  let lineStart = 0;
  while (lineStart < body.length) {
    const lf = body.indexOf(LF, lineStart);
    const breakEnd = lf < 0 ? body.length : lf + 1;
    const contentEnd = lf < 0 ? body.length : lf > lineStart && body[lf - 1] === CR ? lf - 1 : lf;
    let end = contentEnd;
    while (end > lineStart && (body[end - 1] === SPACE || body[end - 1] === TAB)) end--;
    const softBreak = end > lineStart && body[end - 1] === EQUALS;
    if (softBreak) end--;
    for (let i = lineStart; i < end; i++) {
      const byte = body[i] as number;
      const escape = byte === EQUALS && i + 2 < end;
      const high = escape ? hexValue(body[i + 1]) : -1;
      const low = escape ? hexValue(body[i + 2]) : -1;
      if (high >= 0 && low >= 0) {
        out[length++] = (high << 4) | low;
        i += 2;
      } else {
        out[length++] = byte;
      }
    }
    if (!softBreak) for (let i = contentEnd; i < breakEnd; i++) out[length++] = body[i] as number;
    lineStart = breakEnd;
  }
  return out.slice(0, length);
}
