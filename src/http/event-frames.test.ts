import { describe, expect, it } from 'vitest';
import type { MessageView } from '../domain/types.js';
import { EventFrames, PING_FRAME } from './event-frames.js';
import { SSE_PING, sseEvent } from './sse-writer.js';

const message = (id: string, subject = 'hello') => ({ id, subject }) as unknown as MessageView;

describe('EventFrames', () => {
  it('encodes a message event as the bytes a stream writes, built once per message', () => {
    let built = 0;
    const frames = new EventFrames((m) => {
      built += 1;
      return JSON.stringify({ id: m.id, subject: m.subject });
    });
    const first = frames.message(message('m1', 'größe'));
    expect(first.toString('utf8')).toBe(sseEvent('message', '{"id":"m1","subject":"größe"}', 'm1'));
    expect(frames.message(message('m1', 'größe'))).toBe(first);
    expect(built).toBe(1);
  });

  it('keeps at most its entry count, oldest out, and never a frame over its byte bound', () => {
    const frames = new EventFrames((m) => JSON.stringify({ subject: m.subject }), 2, 200);
    const one = frames.message(message('m1'));
    frames.message(message('m2'));
    frames.message(message('m3'));
    expect(frames.size).toBe(2);
    expect(frames.message(message('m1'))).not.toBe(one);
    frames.message(message('big', 'x'.repeat(300)));
    expect(frames.size).toBe(2);
  });

  it('has the ping encoded once', () => {
    expect(PING_FRAME.toString('utf8')).toBe(SSE_PING);
  });
});
