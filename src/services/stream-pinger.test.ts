import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { STREAM_PING_MS, STREAM_PING_SWEEP_MS } from '../domain/live-limits.js';
import { StreamPinger, type PingedStream } from './stream-pinger.js';

const clock = { now: () => new Date() };

function stream(): PingedStream & { pings: number } {
  const s = {
    lastWriteAt: Date.now(),
    pings: 0,
    ping: () => {
      s.pings += 1;
      return Promise.resolve();
    },
  };
  return s;
}

describe('StreamPinger', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('pings a stream silent for STREAM_PING_MS, within one sweep of it, and again after as long', async () => {
    const pinger = new StreamPinger(clock, () => undefined);
    const quiet = stream();
    pinger.add(quiet);
    await vi.advanceTimersByTimeAsync(STREAM_PING_MS - 1);
    expect(quiet.pings).toBe(0);
    await vi.advanceTimersByTimeAsync(STREAM_PING_SWEEP_MS);
    expect(quiet.pings).toBe(1);
    await vi.advanceTimersByTimeAsync(STREAM_PING_MS + STREAM_PING_SWEEP_MS);
    expect(quiet.pings).toBe(2);
  });

  it('does not ping a stream that wrote meanwhile', async () => {
    const pinger = new StreamPinger(clock, () => undefined);
    const busy = stream();
    const quiet = stream();
    pinger.add(busy);
    pinger.add(quiet);
    await vi.advanceTimersByTimeAsync(STREAM_PING_MS / 2);
    busy.lastWriteAt = Date.now();
    await vi.advanceTimersByTimeAsync(STREAM_PING_MS / 2 + STREAM_PING_SWEEP_MS);
    expect(quiet.pings).toBe(1);
    expect(busy.pings).toBe(0);
  });

  it('runs its one timer only while a stream is open, and stops pinging a removed stream', async () => {
    const pinger = new StreamPinger(clock, () => undefined);
    expect(vi.getTimerCount()).toBe(0);
    const one = stream();
    const offOne = pinger.add(one);
    const offTwo = pinger.add(stream());
    expect(vi.getTimerCount()).toBe(1);
    offOne();
    await vi.advanceTimersByTimeAsync(STREAM_PING_MS + STREAM_PING_SWEEP_MS);
    expect(one.pings).toBe(0);
    offTwo();
    expect(vi.getTimerCount()).toBe(0);
    expect(pinger.size).toBe(0);
  });

  it('hands a failed ping to onError and goes on', async () => {
    const errors: unknown[] = [];
    const pinger = new StreamPinger(clock, (error) => errors.push(error));
    const failing = { lastWriteAt: Date.now(), ping: () => Promise.reject(new Error('gone')) };
    const quiet = stream();
    pinger.add(failing);
    pinger.add(quiet);
    await vi.advanceTimersByTimeAsync(STREAM_PING_MS + STREAM_PING_SWEEP_MS);
    expect(errors).toHaveLength(1);
    expect(quiet.pings).toBe(1);
  });
});
