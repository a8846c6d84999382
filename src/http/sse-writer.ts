import type { Writable } from 'node:stream';
import { STREAM_MAX_QUEUED_BYTES } from '../domain/live-limits.js';
import { ANSWER_SLICE_BYTES } from './stall-guard.js';

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
 * Writes one event once the client has taken what was written before (the response's
 * `write()` said it was full: it then waits for `drain`), so a stream holds at most one
 * event's bytes for a client that stops reading; `chunk` is built only then. A response past
 * STREAM_MAX_QUEUED_BYTES is dropped (`onDrop`): the client reconnects with Last-Event-ID
 * and misses nothing. The wait ends when the response closes: a client that takes nothing
 * for a minute is cut by the server's stall rule, and shutdown closes every stream.
 */
export async function writeWhenDrained(body: Writable, chunk: () => string | Buffer, onDrop: (reason: string) => void): Promise<void> {
  if (body.writableNeedDrain) await drained(body);
  if (body.destroyed || body.writableEnded) return;
  const bytes = chunk();
  // Text (a comment, a deletion) is small and written whole: slicing it could split a character.
  if (typeof bytes === 'string') body.write(bytes);
  else for (let at = 0; at < bytes.length; at += ANSWER_SLICE_BYTES) body.write(bytes.subarray(at, at + ANSWER_SLICE_BYTES));
  if (body.writableLength > STREAM_MAX_QUEUED_BYTES) onDrop('send buffer full');
}

/** Resolves on the response's next `drain`, or when it closes. */
function drained(body: Writable): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      body.off('drain', done);
      body.off('close', done);
      resolve();
    };
    body.on('drain', done);
    body.on('close', done);
  });
}
