import { joinWithRoomInFront } from './message-bytes.js';

/**
 * What an incoming `Authentication-Results:` field that claims to be ours is renamed to. RFC
 * 8601 §5 has a receiver remove or rename such fields, since only the receiver itself may write
 * results under its authserv-id; renamed, the bytes the sender wrote stay readable in the
 * stored message (this is an inbox for inspection), and no reader or filter takes them for ours.
 */
export const RENAMED_FIELD_NAME = 'X-Original-Authentication-Results';

const FIELD_NAME = 'authentication-results';
const RENAMED = new TextEncoder().encode(RENAMED_FIELD_NAME);

const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;
const COLON = 0x3a;

/**
 * `received` with every `Authentication-Results:` field of its header section whose authserv-id
 * is one of `ownIds` (compared without case and without a trailing dot) renamed to
 * RENAMED_FIELD_NAME; the field's value and every other byte stay as they came. A message with
 * no such field (nearly all) is returned as is, the same view; one with any is copied once,
 * with the room in front that the delivery writes its own header into. One pass over the
 * header section: linear in its length whatever it holds.
 */
export function renameClaimedAuthenticationResults(received: Uint8Array, ownIds: readonly string[]): Uint8Array {
  const own = new Set(ownIds.map(normaliseId));
  const longest = Math.max(0, ...[...own].map((id) => id.length));
  const claimed = claimedFieldStarts(received, own, longest);
  if (claimed.length === 0) return received;
  const chunks: Uint8Array[] = [];
  let from = 0;
  for (const start of claimed) {
    chunks.push(received.subarray(from, start), RENAMED);
    from = start + FIELD_NAME.length;
  }
  chunks.push(received.subarray(from));
  return joinWithRoomInFront(chunks, received.byteLength + claimed.length * (RENAMED.byteLength - FIELD_NAME.length));
}

/** Offsets of the header fields named Authentication-Results whose authserv-id is in `own`. */
function claimedFieldStarts(bytes: Uint8Array, own: ReadonlySet<string>, longest: number): number[] {
  const starts: number[] = [];
  let line = 0;
  while (line < bytes.length) {
    const first = bytes[line];
    // A blank line (CRLF or a bare LF) ends the header section: the body is not looked at.
    if (first === LF || (first === CR && bytes[line + 1] === LF)) break;
    const end = fieldEnd(bytes, line);
    const colon = nameEnd(bytes, line, end);
    if (colon >= 0 && own.has(authservId(bytes, colon + 1, end, longest))) starts.push(line);
    line = end;
  }
  return starts;
}

/** Where the field that starts at `start` ends: after its last line, continuation lines included. */
function fieldEnd(bytes: Uint8Array, start: number): number {
  let position = start;
  for (;;) {
    const lf = bytes.indexOf(LF, position);
    if (lf < 0) return bytes.length;
    position = lf + 1;
    const next = bytes[position];
    if (next !== SPACE && next !== TAB) return position;
  }
}

/**
 * The offset of the colon when the field at `start` is named Authentication-Results (in any
 * case; RFC 5322 §4.5.3 obsolete syntax allows white space before the colon, and parsers accept
 * it), else -1.
 */
function nameEnd(bytes: Uint8Array, start: number, end: number): number {
  if (end - start <= FIELD_NAME.length) return -1;
  for (let i = 0; i < FIELD_NAME.length; i += 1) {
    const byte = bytes[start + i] ?? 0;
    // ASCII upper-case letters lowered; nothing else is.
    if ((byte >= 0x41 && byte <= 0x5a ? byte | 0x20 : byte) !== FIELD_NAME.charCodeAt(i)) return -1;
  }
  let position = start + FIELD_NAME.length;
  while (position < end && (bytes[position] === SPACE || bytes[position] === TAB)) position += 1;
  return bytes[position] === COLON ? position : -1;
}

/**
 * The authserv-id of an Authentication-Results value (RFC 8601 §2.2: optional comments and
 * folding white space, then a token or a quoted-string), normalised; '' when there is none,
 * or when it is longer than `longest` (the longest id it is compared with: a megabyte-long id
 * is never copied out). Comments may nest (RFC 5322 §3.2.2): their depth is a counter, never
 * a recursion.
 */
function authservId(bytes: Uint8Array, start: number, end: number, longest: number): string {
  let position = start;
  let depth = 0;
  for (; position < end; position += 1) {
    const byte = bytes[position];
    if (depth > 0) {
      if (byte === 0x5c) position += 1; // quoted-pair: the next byte is literal
      else if (byte === 0x28) depth += 1;
      else if (byte === 0x29) depth -= 1;
    } else if (byte === 0x28) depth = 1;
    else if (byte !== SPACE && byte !== TAB && byte !== CR && byte !== LF) break;
  }
  let id = '';
  // One more than the longest own id: a trailing dot is dropped before comparing.
  const room = longest + 1;
  if (bytes[position] === 0x22) {
    for (position += 1; position < end && bytes[position] !== 0x22 && id.length <= room; position += 1) {
      if (bytes[position] === 0x5c) position += 1;
      id += String.fromCharCode(bytes[position] ?? 0);
    }
  } else {
    for (; position < end && !isIdEnd(bytes[position] ?? 0) && id.length <= room; position += 1) id += String.fromCharCode(bytes[position] ?? 0);
  }
  return id.length > room ? '' : normaliseId(id);
}

/** A byte that ends an unquoted authserv-id: `;`, `(`, white space or a control character. */
function isIdEnd(byte: number): boolean {
  return byte === 0x3b || byte === 0x28 || byte <= SPACE || byte === 0x7f;
}

/** Domain names compare without case and without the trailing dot of a fully qualified name. */
function normaliseId(id: string): string {
  return id.toLowerCase().replace(/\.$/, '');
}
