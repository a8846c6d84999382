import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateDecision, RateLimiter, RateRule } from '../ports/rate-limiter.js';

/**
 * Fair-use counters in this process's memory (rate-limiter-flexible's fixed windows). Right
 * for one node; several nodes need the shared adapter so quotas are not multiplied.
 */
export class MemoryRateLimiter implements RateLimiter {
  private readonly limiters = new Map<string, RateLimiterMemory>();

  async consume(rule: RateRule, key: string, points = 1): Promise<RateDecision> {
    try {
      const res = await this.limiterFor(rule).consume(key, points);
      return decision(rule, res, true);
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) return decision(rule, rejection, false);
      throw rejection;
    }
  }

  async peek(rule: RateRule, key: string): Promise<RateDecision> {
    const res = await this.limiterFor(rule).get(key);
    if (res === null) return { allowed: true, limit: rule.points, remaining: rule.points, resetSeconds: rule.durationSeconds };
    return decision(rule, res, res.remainingPoints > 0);
  }

  private limiterFor(rule: RateRule): RateLimiterMemory {
    let limiter = this.limiters.get(rule.name);
    if (limiter === undefined) {
      limiter = new RateLimiterMemory({ keyPrefix: rule.name, points: rule.points, duration: rule.durationSeconds });
      this.limiters.set(rule.name, limiter);
    }
    return limiter;
  }
}

function decision(rule: RateRule, res: RateLimiterRes, allowed: boolean): RateDecision {
  return {
    allowed,
    limit: rule.points,
    remaining: Math.max(0, res.remainingPoints),
    resetSeconds: Math.max(allowed ? 0 : 1, Math.ceil(res.msBeforeNext / 1000)),
  };
}
