import { describe, expect, it } from 'vitest';
import { AppError } from '../domain/errors.js';
import { HELD_PER_CLIENT, HELD_PER_SESSION } from '../domain/live-limits.js';
import { HeldRequests } from './held-requests.js';

const code = (work: () => unknown): string | undefined => {
  try {
    work();
  } catch (error) {
    return error instanceof AppError ? error.code : 'other';
  }
  return undefined;
};

describe('HeldRequests', () => {
  it('caps holds per session, then per client key (an IPv6 /64 is one client), and frees slots on release', () => {
    const held = new HeldRequests();
    const holds = Array.from({ length: HELD_PER_SESSION }, () => held.acquire('s1', '192.0.2.1'));
    expect(code(() => held.acquire('s1', '192.0.2.9'))).toBe('rate_limited');
    holds[0]?.release();
    holds[0]?.release();
    expect(held.size).toBe(HELD_PER_SESSION - 1);
    expect(code(() => held.acquire('s1', '192.0.2.1'))).toBeUndefined();

    const other = new HeldRequests();
    for (let i = 0; i < HELD_PER_CLIENT; i += 1) other.acquire(`session-${i}`, `2001:db8::${(i % 50).toString(16)}`);
    expect(code(() => other.acquire('fresh', '2001:db8::ffff'))).toBe('rate_limited');
    expect(code(() => other.acquire('fresh', '2001:db8:0:1::1'))).toBeUndefined();
  });

  it('without per-client caps (RATE_LIMITS=off) takes more than a session’s share', () => {
    const held = new HeldRequests(false);
    for (let i = 0; i < HELD_PER_CLIENT + 1; i += 1) held.acquire('s1', '192.0.2.1');
    expect(held.size).toBe(HELD_PER_CLIENT + 1);
  });

  it('shutdown aborts every hold, refuses new ones, and drained() resolves once all are released', async () => {
    const held = new HeldRequests();
    const a = held.acquire('s1', '192.0.2.1');
    const b = held.acquire('s2', '192.0.2.2');
    let drained = false;
    held.shutdown();
    expect(a.signal.aborted).toBe(true);
    const waiting = held.drained(5000).then(() => (drained = true));
    expect(code(() => held.acquire('s3', '192.0.2.3'))).toBe('unavailable');
    a.release();
    await Promise.resolve();
    expect(drained).toBe(false);
    b.release();
    await waiting;
    expect(drained).toBe(true);
  });

  it('calls each shutdown listener once, not after it was cancelled, and at once after shutdown', () => {
    const held = new HeldRequests();
    const hold = held.acquire('s1', '192.0.2.1');
    const calls: string[] = [];
    const listener = () => calls.push('a');
    hold.onShutdown(listener);
    const cancel = hold.onShutdown(listener);
    const offB = hold.onShutdown(() => calls.push('b'));
    cancel();
    offB();
    held.shutdown();
    held.shutdown();
    expect(calls).toEqual(['a']);
    hold.onShutdown(() => calls.push('late'));
    expect(calls).toEqual(['a', 'late']);
  });
});
