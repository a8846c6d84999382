import type { MailLimits } from './mail-limits.js';

/**
 * Why a message is too costly for the MIME parser, or null when it is not. postal-mime
 * is linear but pays per line (a 7bit/8bit part becomes one Blob piece per line, ~10 µs
 * each) and per part (~20–50 µs): 10 MB of two-byte lines is a minute of blocked event
 * loop. One pass over the bytes counts both, so such a message goes to the fallback.
 */
export function structureProblem(raw: Uint8Array, limits: MailLimits): string | null {
  let lines = 0;
  let delimiters = 0;
  let lineStart = true;
  for (let i = 0; i < raw.length; i++) {
    const byte = raw[i];
    if (lineStart && byte === 0x2d && raw[i + 1] === 0x2d) delimiters++;
    lineStart = byte === 0x0a;
    if (lineStart) lines++;
  }
  if (lines > limits.maxLines) return `${lines} lines, more than ${limits.maxLines}`;
  if (delimiters > limits.maxParts) return `${delimiters} boundary-like lines, more than ${limits.maxParts}`;
  return null;
}
