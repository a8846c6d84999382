import { TempInboxError } from './errors.js';
import { MAX_EVENT_CHARS } from './limits.js';

/** One dispatched event of a text/event-stream. */
export interface StreamEvent {
  event: string;
  data: string;
  /** The `id:` field of this event, if it had one. */
  id: string | undefined;
}

/**
 * An incremental parser of text/event-stream (HTML Living Standard, "Server-sent events":
 * lines end in CRLF, LF or CR; `event`, `data`, `id` fields; a blank line dispatches; `:`
 * starts a comment). Fed decoded text in any chunking; one event is at most MAX_EVENT_CHARS.
 */
export class EventStreamParser {
  private buffer = '';
  private event = '';
  private data: string[] = [];
  private dataChars = 0;
  private id: string | undefined;
  /** The previous chunk ended in CR: a LF starting this one belongs to it. */
  private pendingCr = false;

  /** Feeds a chunk; returns the events it completed. */
  push(chunk: string): StreamEvent[] {
    let text = chunk;
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = false;
    this.buffer += text;
    const events: StreamEvent[] = [];
    let start = 0;
    for (;;) {
      const lf = this.buffer.indexOf('\n', start);
      const cr = this.buffer.indexOf('\r', start);
      let end: number;
      let next: number;
      if (cr !== -1 && (lf === -1 || cr < lf)) {
        end = cr;
        if (cr + 1 === this.buffer.length) {
          this.pendingCr = true;
          next = cr + 1;
        } else next = this.buffer[cr + 1] === '\n' ? cr + 2 : cr + 1;
      } else if (lf !== -1) {
        end = lf;
        next = lf + 1;
      } else break;
      const event = this.line(this.buffer.slice(start, end));
      if (event !== undefined) events.push(event);
      start = next;
    }
    this.buffer = this.buffer.slice(start);
    if (this.buffer.length + this.dataChars > MAX_EVENT_CHARS) {
      throw new TempInboxError(0, 'invalid_response', `An event of the stream is longer than ${MAX_EVENT_CHARS} characters.`);
    }
    return events;
  }

  private line(line: string): StreamEvent | undefined {
    if (line === '') {
      const event = this.data.length === 0 ? undefined : { event: this.event || 'message', data: this.data.join('\n'), id: this.id };
      this.event = '';
      this.data = [];
      this.dataChars = 0;
      this.id = undefined;
      return event;
    }
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') {
      this.data.push(value);
      this.dataChars += value.length + 1;
      if (this.dataChars > MAX_EVENT_CHARS) throw new TempInboxError(0, 'invalid_response', `An event of the stream is longer than ${MAX_EVENT_CHARS} characters.`);
    } else if (field === 'id' && !value.includes('\0')) this.id = value;
    return undefined;
  }
}
