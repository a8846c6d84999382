import type { MessageView } from '../domain/types.js';
import { SSE_PING, sseEvent } from './sse-writer.js';

/**
 * Message frames kept: the streams of one inbox write a message within milliseconds of each
 * other, so only the newest few are ever asked for again.
 */
export const EVENT_FRAME_CACHE_ENTRIES = 64;

/**
 * Largest frame kept (bytes): as for listing JSON (LISTING_CACHE_ENTRY_BYTES), so the cache
 * holds at most 64 × 64 KiB = 4 MiB, and ordinary mail (a few KB) a small part of that.
 */
export const EVENT_FRAME_CACHE_ENTRY_BYTES = 64 * 1024;

/** The ping, encoded once for every stream (it is only ever read). */
export const PING_FRAME: Buffer = Buffer.from(SSE_PING);

/**
 * A `message` event as the bytes a stream writes (docs/api.md "Event stream"), built once per
 * message for every stream of the inbox and reused (docs/architecture.md "Serialise once"):
 * writing a string made each stream encode the same text again. A stored message never
 * changes and its id is never reused, so a frame is valid as long as it is kept; oldest first
 * out.
 */
export class EventFrames {
  private readonly frames = new Map<string, Buffer>();

  constructor(
    private readonly json: (message: MessageView) => string,
    private readonly maxEntries = EVENT_FRAME_CACHE_ENTRIES,
    private readonly maxEntryBytes = EVENT_FRAME_CACHE_ENTRY_BYTES,
  ) {}

  message(message: MessageView): Buffer {
    const kept = this.frames.get(message.id);
    if (kept !== undefined) return kept;
    const frame = Buffer.from(sseEvent('message', this.json(message), message.id));
    if (frame.length <= this.maxEntryBytes) {
      this.frames.set(message.id, frame);
      for (const id of this.frames.keys()) {
        if (this.frames.size <= this.maxEntries) break;
        this.frames.delete(id);
      }
    }
    return frame;
  }

  /** Frames kept (tests). */
  get size(): number {
    return this.frames.size;
  }
}
