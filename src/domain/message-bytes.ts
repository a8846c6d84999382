/**
 * A received message's bytes, joined once on the main thread (docs/architecture.md "One copy
 * of each message's bytes"). The SMTP listener joins the DATA chunks into one buffer with room
 * left in front; the delivery writes the trace lines and the Authentication-Results header into
 * that room, so the stored message (trace, header, received bytes) is the same memory as the
 * received bytes instead of a second copy of them held until the commit.
 *
 * A plain ArrayBuffer, not a SharedArrayBuffer: shared buffers would reach the parse worker and
 * the SQLite thread without a structured-clone copy, but V8 frees them much later than
 * ArrayBuffers, and under load that cost more memory than the copies it saved
 * (docs/benchmarks.md "One copy of each message's bytes").
 */

/**
 * Bytes left free in front of the received bytes for what the server prepends. The trace
 * lines are at most ~1.3 KB (a Return-Path cut at 998 characters, a HELO name of at most 255)
 * and typically ~200 bytes; an Authentication-Results header is ~300-600 bytes for mail with
 * one or two DKIM signatures. 2 KiB holds the usual pair; a longer one (many signatures, a
 * huge envelope sender) costs one more copy of the message, never a wrong byte.
 */
export const FRONT_ROOM_BYTES = 2048;

/** Views whose room in front is still free to write (claimed once, by withPrefix). */
const roomInFront = new WeakSet<Uint8Array>();

/**
 * The chunks, in order, copied once into a new buffer after FRONT_ROOM_BYTES of free room.
 * `length` is their total size.
 */
export function joinWithRoomInFront(chunks: readonly Uint8Array[], length: number): Uint8Array {
  const joined = new Uint8Array(FRONT_ROOM_BYTES + length);
  let offset = FRONT_ROOM_BYTES;
  for (const chunk of chunks) {
    joined.set(chunk, offset);
    offset += chunk.byteLength;
  }
  const received = joined.subarray(FRONT_ROOM_BYTES);
  roomInFront.add(received);
  return received;
}

/**
 * `prefix` parts, then `received`, as one view. When `received` came from
 * joinWithRoomInFront with enough room left, the parts are written in front of it and the
 * view covers the same memory (no copy of the received bytes; the room is used up, so a
 * second call copies). Otherwise everything is copied once into a new buffer.
 */
export function withPrefix(prefix: readonly Uint8Array[], received: Uint8Array): Uint8Array {
  const prefixBytes = prefix.reduce((sum, part) => sum + part.byteLength, 0);
  const inPlace = roomInFront.delete(received) && prefixBytes <= received.byteOffset;
  const out = inPlace
    ? new Uint8Array(received.buffer, received.byteOffset - prefixBytes, prefixBytes + received.byteLength)
    : new Uint8Array(prefixBytes + received.byteLength);
  let offset = 0;
  for (const part of prefix) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  if (!inPlace) out.set(received, offset);
  return out;
}
