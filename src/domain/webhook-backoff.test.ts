import { describe, expect, it } from 'vitest';
import { WEBHOOK_MAX_ATTEMPTS, webhookRetryDelayMs } from './webhook-backoff.js';

describe('webhookRetryDelayMs', () => {
  const middle = (): number => 0.5;

  it('waits base × 1, 6, 30, 180 and 720 s after attempts 1 to 5, then gives up after the sixth', () => {
    const delays = Array.from({ length: WEBHOOK_MAX_ATTEMPTS }, (_, i) => webhookRetryDelayMs(i + 1, 10, middle));
    expect(delays).toEqual([10_000, 60_000, 300_000, 1_800_000, 7_200_000, null]);
    expect(WEBHOOK_MAX_ATTEMPTS).toBe(6);
  });

  it('scales with the base (1 s for tests)', () => {
    expect([1, 2, 3, 4, 5].map((attempt) => webhookRetryDelayMs(attempt, 1, middle))).toEqual([1000, 6000, 30_000, 180_000, 720_000]);
  });

  it('spreads each wait by at most ± 10 %', () => {
    expect(webhookRetryDelayMs(1, 10, () => 0)).toBe(9000);
    expect(webhookRetryDelayMs(1, 10, () => 0.999_999)).toBe(11_000);
    expect(webhookRetryDelayMs(5, 10, () => 0)).toBe(6_480_000);
    for (let i = 0; i < 200; i += 1) {
      const delay = webhookRetryDelayMs(2, 10) ?? 0;
      expect(delay).toBeGreaterThanOrEqual(54_000);
      expect(delay).toBeLessThanOrEqual(66_000);
    }
  });

  it('has no attempt after the sixth and refuses attempt numbers below 1', () => {
    expect(webhookRetryDelayMs(6, 10, middle)).toBeNull();
    expect(webhookRetryDelayMs(7, 10, middle)).toBeNull();
    expect(() => webhookRetryDelayMs(0, 10)).toThrow(RangeError);
    expect(() => webhookRetryDelayMs(1.5, 10)).toThrow(RangeError);
  });
});
