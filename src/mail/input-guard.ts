import type { MailLimits } from './mail-limits.js';

/**
 * Why a message is too costly for the MIME parser, or null when it is not. postal-mime
 * is linear but pays per line (a 7bit/8bit part becomes one Blob piece per line, ~10 µs
 * each) and per part (~20–50 µs): 10 MB of two-byte lines is a minute of blocked event
 * loop. One pass over the lines counts both, so such a message goes to the fallback. The
 * pass jumps from line feed to line feed with the native `indexOf`, and stops once the
 * lines are too many: a byte-by-byte loop cost ~5 % of a 100 KB message's parse.
 */
export function structureProblem(raw: Uint8Array, limits: MailLimits): string | null {
  let lines = 0;
  let delimiters = 0;
  for (let start = 0; start < raw.length; ) {
    // A line beginning `--` may be a MIME boundary.
    if (raw[start] === 0x2d && raw[start + 1] === 0x2d) delimiters++;
    const end = raw.indexOf(0x0a, start);
    if (end === -1) break;
    lines++;
    if (lines > limits.maxLines) return `more than ${limits.maxLines} lines`;
    start = end + 1;
  }
  if (delimiters > limits.maxParts) return `${delimiters} boundary-like lines, more than ${limits.maxParts}`;
  return null;
}
