/** Attempts of one delivery in all; after the sixth fails, the delivery is given up. */
export const WEBHOOK_MAX_ATTEMPTS = 6;

/**
 * Waits before attempts 2 to 6, in units of the base (WEBHOOK_RETRY_BASE_SECONDS), each counted
 * from the end of the attempt before. With the default base of 10 s: 10 s, 1 min, 5 min, 30 min
 * and 2 h, about 2.6 h in all, which rides out a receiver's deploy or a short outage without
 * holding deliveries for days.
 */
export const WEBHOOK_RETRY_STEPS: readonly number[] = [1, 6, 30, 180, 720];

/**
 * Spread of each wait, ± this fraction: deliveries that failed together (a receiver that was
 * down) do not all come back in the same second.
 */
export const WEBHOOK_RETRY_JITTER = 0.1;

/**
 * Milliseconds from the end of attempt `attempt` (1-based) to the start of the next, or null
 * when `attempt` was the last. `random` returns [0, 1) like Math.random; a test passes its own.
 */
export function webhookRetryDelayMs(attempt: number, baseSeconds: number, random: () => number = Math.random): number | null {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError(`attempt must be a positive integer, not ${attempt}`);
  const step = WEBHOOK_RETRY_STEPS[attempt - 1];
  if (step === undefined || attempt >= WEBHOOK_MAX_ATTEMPTS) return null;
  const spread = 1 + (2 * random() - 1) * WEBHOOK_RETRY_JITTER;
  return Math.round(step * baseSeconds * 1000 * spread);
}
