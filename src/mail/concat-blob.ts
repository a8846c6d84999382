/** What a Blob may be built from, as far as the parse worker needs (no nested Blobs). */
export type ConcatBlobPart = string | ArrayBuffer | ArrayBufferView;

const encoder = new TextEncoder();

/**
 * Parts up to this size are copied byte by byte: TypedArray#set costs more per call than a
 * loop over a line's bytes (a decoded line is ~80 bytes), and copies longer runs faster.
 */
const SMALL_CHUNK_BYTES = 256;

/**
 * A Blob that concatenates its parts once, in the constructor. postal-mime collects every
 * decoded body line as two Blob parts (the line and "\n") and reads them back with
 * `blob.arrayBuffer()`; Node 20's Blob reads a many-part blob one part per microtask, which
 * made that readback most of the cost of parsing a large message (a 100 KB text body took
 * ~20 ms, ~60 % of it in Blob internals). Installed as the global Blob only inside the
 * parse worker (parse-worker.ts), whose only job is parsing, never in the main thread.
 */
export class ConcatBlob {
  readonly type: string;
  readonly #bytes: Uint8Array;

  constructor(parts: Iterable<ConcatBlobPart> = [], options: { type?: string } = {}) {
    // Two passes, one allocation: postal-mime's parts are each decoded line's bytes and a
    // "\n" after it, so a byte view is copied as it is (no view of it made) and a one-character
    // ASCII string written as its byte, without a TextEncoder call and a buffer per line break
    // (on a 100 KB body those per-part allocations were most of this constructor's time).
    const list = Array.isArray(parts) ? (parts as ConcatBlobPart[]) : [...parts];
    const encoded: Array<Uint8Array | number> = new Array(list.length);
    let size = 0;
    for (let i = 0; i < list.length; i += 1) {
      const part = list[i] as ConcatBlobPart;
      let chunk: Uint8Array | number;
      if (typeof part === 'string') {
        const code = part.length === 1 ? part.charCodeAt(0) : -1;
        chunk = code >= 0 && code < 0x80 ? code : encoder.encode(part);
      } else if (part instanceof Uint8Array) {
        chunk = part;
      } else if (part instanceof ArrayBuffer) {
        chunk = new Uint8Array(part);
      } else {
        chunk = new Uint8Array(part.buffer, part.byteOffset, part.byteLength);
      }
      encoded[i] = chunk;
      size += typeof chunk === 'number' ? 1 : chunk.byteLength;
    }
    const bytes = new Uint8Array(size);
    let offset = 0;
    for (const chunk of encoded) {
      if (typeof chunk === 'number') {
        bytes[offset] = chunk;
        offset += 1;
      } else if (chunk.byteLength <= SMALL_CHUNK_BYTES) {
        for (let i = 0; i < chunk.byteLength; i += 1) bytes[offset + i] = chunk[i] as number;
        offset += chunk.byteLength;
      } else {
        bytes.set(chunk, offset);
        offset += chunk.byteLength;
      }
    }
    this.#bytes = bytes;
    // As the Blob constructor does (File API §3.1): a type with non-ASCII is dropped; lower-cased.
    const type = options.type ?? '';
    this.type = /^[\x20-\x7e]*$/.test(type) ? type.toLowerCase() : '';
  }

  get size(): number {
    return this.#bytes.byteLength;
  }

  /** A copy of the bytes, as Blob.arrayBuffer() gives (the caller may keep and change it). */
  arrayBuffer(): Promise<ArrayBuffer> {
    return Promise.resolve(this.#bytes.slice().buffer);
  }

  text(): Promise<string> {
    return Promise.resolve(new TextDecoder().decode(this.#bytes));
  }

  bytes(): Promise<Uint8Array> {
    return Promise.resolve(this.#bytes.slice());
  }
}
