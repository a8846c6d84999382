import { RateLimiterMemory } from 'rate-limiter-flexible';
import { FlexibleRateLimiter } from './flexible-rate-limiter.js';

/**
 * Fair-use counters in this process's memory (rate-limiter-flexible's fixed windows). Right
 * for one node; several nodes use PostgresRateLimiter so quotas are not multiplied.
 */
export class MemoryRateLimiter extends FlexibleRateLimiter {
  constructor() {
    super((rule) => new RateLimiterMemory({ keyPrefix: rule.name, points: rule.points, duration: rule.durationSeconds }));
  }
}
