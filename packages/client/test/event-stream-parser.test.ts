import { describe, expect, it } from 'vitest';
import { EventStreamParser } from '../src/event-stream-parser.js';

const STREAM = ': open\r\n\r\nevent: message\r\nid: a1\r\ndata: {"id":"a1"}\r\n\r\n: ping\n\nevent: deleted\ndata: {"id":"a1"}\n\nevent: expired\rdata: {}\r\r';

describe('EventStreamParser', () => {
  it('parses CRLF, LF and CR line ends, comments and fields, however the text is cut', () => {
    for (let size = 1; size <= STREAM.length; size += 1) {
      const parser = new EventStreamParser();
      const events = [];
      for (let at = 0; at < STREAM.length; at += size) events.push(...parser.push(STREAM.slice(at, at + size)));
      expect(events, `chunks of ${size}`).toEqual([
        { event: 'message', id: 'a1', data: '{"id":"a1"}' },
        { event: 'deleted', id: undefined, data: '{"id":"a1"}' },
        { event: 'expired', id: undefined, data: '{}' },
      ]);
    }
  });

  it('joins data lines and takes the default event name', () => {
    expect(new EventStreamParser().push('data:one\ndata: two\n\n')).toEqual([{ event: 'message', id: undefined, data: 'one\ntwo' }]);
  });
});
