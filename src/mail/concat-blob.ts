/** What a Blob may be built from, as far as the parse worker needs (no nested Blobs). */
export type ConcatBlobPart = string | ArrayBuffer | ArrayBufferView;

const encoder = new TextEncoder();

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
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (const part of parts) {
      const chunk = typeof part === 'string'
        ? encoder.encode(part)
        : part instanceof ArrayBuffer
          ? new Uint8Array(part)
          : new Uint8Array(part.buffer, part.byteOffset, part.byteLength);
      chunks.push(chunk);
      size += chunk.byteLength;
    }
    const bytes = new Uint8Array(size);
    let offset = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, offset);
      offset += chunk.byteLength;
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
