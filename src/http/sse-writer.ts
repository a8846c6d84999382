import type { Writable } from 'node:stream';
import { STREAM_DRAIN_TIMEOUT_MS, STREAM_MAX_BUFFERED_BYTES } from '../domain/live-limits.js';

/**
 * One event in the text/event-stream format (WHATWG HTML "Server-sent events" §9.2.6):
 * `event:`, `id:`, one `data:` line, a blank line. `data` must hold no CR or LF: JSON text
 * from JSON.stringify never does (it escapes both).
 */
export function sseEvent(event: string, data: string, id?: string): string {
  return `event: ${event}\n${id === undefined ? '' : `id: ${id}\n`}data: ${data}\n\n`;
}

/** A comment line: keeps proxies from closing an idle stream, ignored by EventSource. */
export const SSE_PING = ': ping\n\n';

/**
 * Writes one event to a stream's response with a bound on what waits for a slow client:
 * it resolves when the response has room again; a client that leaves more than
 * STREAM_MAX_BUFFERED_BYTES queued (`writableLength`: the response's buffer and its
 * socket's), or takes none of it for STREAM_DRAIN_TIMEOUT_MS, is dropped (`onDrop`): it
 * reconnects with Last-Event-ID and misses nothing.
 */
export async function writeBounded(body: Writable, chunk: string | Uint8Array, onDrop: (reason: string) => void): Promise<void> {
  if (body.destroyed || body.writableEnded) return;
  const room = body.write(chunk);
  if (body.writableLength > STREAM_MAX_BUFFERED_BYTES) {
    onDrop('send buffer full');
    return;
  }
  if (room) return;
  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      cleanup();
      onDrop('client too slow');
      resolve();
    }, STREAM_DRAIN_TIMEOUT_MS);
    const done = () => {
      cleanup();
      resolve();
    };
    const cleanup = () => {
      clearTimeout(timer);
      body.off('drain', done);
      body.off('close', done);
    };
    body.on('drain', done);
    body.on('close', done);
  });
}
