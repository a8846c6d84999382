import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isAppError } from '../domain/errors.js';
import { ParseSlots, type ParseSlot } from './parse-slots.js';

const options = { threads: 1, spares: 1, slowMs: 200, maxWaitMs: 30_000 };

/** Settles pending promise callbacks (grants resolve asynchronously). */
const flush = async (): Promise<void> => {
  await vi.advanceTimersByTimeAsync(0);
};

/** A promise's state after flushing: the slot, the error, or 'pending'. */
function track<T>(promise: Promise<T>): { value: T | 'pending' | Error } {
  const state: { value: T | 'pending' | Error } = { value: 'pending' };
  promise.then(
    (value) => (state.value = value),
    (error: unknown) => (state.value = error as Error),
  );
  return state;
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('ParseSlots', () => {
  it('runs `threads` parses at once and serves the rest in order as slots free', async () => {
    const slots = new ParseSlots({ ...options, spares: 0 });
    const first = await slots.acquire();
    const second = track(slots.acquire());
    const third = track(slots.acquire());
    await flush();
    expect([second.value, third.value]).toEqual(['pending', 'pending']);
    first.release();
    await flush();
    expect(second.value).not.toBe('pending');
    expect(third.value).toBe('pending');
    (second.value as ParseSlot).release();
    await flush();
    expect(third.value).not.toBe('pending');
  });

  it('moves a parse running `slowMs` to a spare slot, so the next one starts without waiting for it', async () => {
    const slots = new ParseSlots(options);
    await slots.acquire();
    const next = track(slots.acquire());
    await vi.advanceTimersByTimeAsync(199);
    expect(next.value).toBe('pending');
    await vi.advanceTimersByTimeAsync(1);
    expect(next.value).not.toBe('pending');
    expect(slots.load).toEqual({ running: 2, slow: 1, waiting: 0 });
  });

  it('uses at most `spares` spare slots; a freed spare goes to the oldest slow parse still in an ordinary slot', async () => {
    const slots = new ParseSlots(options);
    const stuck = await slots.acquire();
    await vi.advanceTimersByTimeAsync(200);
    await slots.acquire();
    const third = track(slots.acquire());
    // The second parse turns slow too, but the one spare is taken: the third waits.
    await vi.advanceTimersByTimeAsync(1000);
    expect(third.value).toBe('pending');
    expect(slots.load).toEqual({ running: 2, slow: 1, waiting: 1 });
    stuck.release();
    await flush();
    // The second parse takes the spare, which frees the ordinary slot for the third.
    expect(third.value).not.toBe('pending');
    expect(slots.load).toEqual({ running: 2, slow: 1, waiting: 0 });
  });

  it('refuses a waiter with `unavailable` after `maxWaitMs`, and forgets it', async () => {
    const slots = new ParseSlots({ ...options, spares: 0, maxWaitMs: 1000 });
    const held = await slots.acquire();
    const waiter = track(slots.acquire());
    await vi.advanceTimersByTimeAsync(1000);
    expect(isAppError(waiter.value) && waiter.value.code).toBe('unavailable');
    expect(slots.load.waiting).toBe(0);
    held.release();
    expect(slots.load.running).toBe(0);
  });

  it('ignores a second release of the same slot', async () => {
    const slots = new ParseSlots({ ...options, threads: 2 });
    const one = await slots.acquire();
    await slots.acquire();
    one.release();
    one.release();
    expect(slots.load.running).toBe(1);
  });

  it('refuses the waiters and every later acquire once closed', async () => {
    const slots = new ParseSlots({ ...options, spares: 0 });
    await slots.acquire();
    const waiter = track(slots.acquire());
    slots.close();
    await flush();
    expect(isAppError(waiter.value) && waiter.value.code).toBe('unavailable');
    const later = await slots.acquire().catch((error: unknown) => error);
    expect(isAppError(later) && later.code).toBe('unavailable');
  });
});
