import { request, type ClientRequest, type IncomingMessage } from 'node:http';

/** One dispatched server-sent event. */
export interface SseEvent {
  event: string;
  id: string;
  data: string;
}

/**
 * A small EventSource over node:http (WHATWG HTML §9.2 parsing: `field: value` lines, comments,
 * dispatch on a blank line, the last event id kept across events): a real client on a real
 * socket, with the cookie and Last-Event-ID a browser would send. No automatic reconnect: tests
 * reconnect themselves with `lastEventId`.
 */
export class SseClient {
  readonly events: SseEvent[] = [];
  /** Comment lines seen (`: ping`). */
  readonly comments: string[] = [];
  lastEventId = '';
  status = 0;
  headers: IncomingMessage['headers'] = {};
  /** Resolves when the server ends the stream (or the socket closes). */
  readonly ended: Promise<void>;
  private req: ClientRequest | undefined;
  private listeners: (() => void)[] = [];

  private constructor(url: string, headers: Record<string, string>, ready: (client: SseClient) => void, fail: (error: Error) => void) {
    let end: () => void = () => undefined;
    this.ended = new Promise((resolve) => (end = resolve));
    const req = request(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      this.status = res.statusCode ?? 0;
      this.headers = res.headers;
      res.setEncoding('utf8');
      let buffer = '';
      let event = { event: '', id: this.lastEventId, data: [] as string[] };
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (;;) {
          const nl = buffer.search(/\r\n|\r|\n/);
          if (nl === -1) break;
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + (buffer.startsWith('\r\n', nl) ? 2 : 1));
          if (line === '') {
            if (event.data.length > 0) {
              this.lastEventId = event.id;
              this.events.push({ event: event.event === '' ? 'message' : event.event, id: event.id, data: event.data.join('\n') });
              for (const wake of this.listeners.splice(0)) wake();
            }
            event = { event: '', id: this.lastEventId, data: [] };
            continue;
          }
          if (line.startsWith(':')) {
            this.comments.push(line.slice(1).trim());
            continue;
          }
          const colon = line.indexOf(':');
          const field = colon === -1 ? line : line.slice(0, colon);
          const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'event') event.event = value;
          else if (field === 'data') event.data.push(value);
          else if (field === 'id' && !value.includes('\0')) event.id = value;
        }
      });
      res.on('end', end);
      res.on('close', end);
      res.on('error', end);
      ready(this);
    });
    req.on('error', (error) => {
      end();
      fail(error);
    });
    req.end();
    this.req = req;
  }

  /** Opens a stream; resolves once the response headers are in. */
  static open(url: string, options: { cookie?: string; lastEventId?: string } = {}): Promise<SseClient> {
    const headers: Record<string, string> = {};
    if (options.cookie !== undefined) headers.cookie = options.cookie;
    if (options.lastEventId !== undefined && options.lastEventId !== '') headers['last-event-id'] = options.lastEventId;
    return new Promise((resolve, reject) => new SseClient(url, headers, resolve, reject));
  }

  /** Waits until `predicate` holds over the events, failing after `timeoutMs`. */
  async until(predicate: (events: SseEvent[]) => boolean, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.events)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`SSE condition not met; events: ${JSON.stringify(this.events.map((e) => [e.event, e.id]))}`);
      await new Promise<void>((wake) => {
        this.listeners.push(wake);
        setTimeout(wake, Math.min(left, 100));
      });
    }
  }

  /** Drops the connection, as a closed tab or a lost network does. */
  close(): void {
    this.req?.destroy();
  }
}
