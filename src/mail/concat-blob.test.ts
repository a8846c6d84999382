import { describe, expect, it } from 'vitest';
import { ConcatBlob, type ConcatBlobPart } from './concat-blob.js';

/** Parts of every kind postal-mime hands the Blob constructor, and a few it might. */
function parts(): ConcatBlobPart[] {
  const bytes = new TextEncoder().encode('héllo wörld');
  const shared = new Uint8Array([0, 1, 2, 3, 4, 5, 6, 7]);
  // One-character strings (ASCII and not), and views on both sides of the byte-by-byte copy's limit.
  const long = new Uint8Array(1000).map((_, i) => i % 251);
  return ['line one', '\n', bytes, '\n', bytes.buffer, shared.subarray(2, 5), new DataView(shared.buffer, 5, 2), '', 'ünïcode ✓', 'é', '\r', long, long.subarray(1, 257), long.subarray(0, 258)];
}

describe('ConcatBlob', () => {
  it('holds the same bytes, size and text as Node Blob', async () => {
    const ours = new ConcatBlob(parts(), { type: 'application/octet-stream' });
    const node = new Blob(parts() as ConstructorParameters<typeof Blob>[0], { type: 'application/octet-stream' });
    expect(ours.size).toBe(node.size);
    expect(ours.type).toBe(node.type);
    expect(new Uint8Array(await ours.arrayBuffer())).toEqual(new Uint8Array(await node.arrayBuffer()));
    expect(await ours.text()).toBe(await node.text());
  });

  it('is empty without parts, and normalises the type like Blob', async () => {
    expect(new ConcatBlob().size).toBe(0);
    expect((await new ConcatBlob().arrayBuffer()).byteLength).toBe(0);
    expect(new ConcatBlob([], { type: 'Text/Plain' }).type).toBe(new Blob([], { type: 'Text/Plain' }).type);
    expect(new ConcatBlob([], { type: 'tëxt/plain' }).type).toBe(new Blob([], { type: 'tëxt/plain' }).type);
  });

  it('gives a copy each time: changing one read does not change the next', async () => {
    const blob = new ConcatBlob(['abc']);
    const first = new Uint8Array(await blob.arrayBuffer());
    first[0] = 0;
    expect(await blob.text()).toBe('abc');
  });
});
