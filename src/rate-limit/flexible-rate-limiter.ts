import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RateDecision, RateLimiter, RateRule } from '../ports/rate-limiter.js';

/** Builds the rate-limiter-flexible limiter of one rule; `first` is true for the first one built. */
export type LimiterFactory = (rule: RateRule, first: boolean) => RateLimiterAbstract;

/**
 * The RateLimiter port over rate-limiter-flexible (fixed windows), one limiter per rule made
 * on first use. The backends differ only in the factory: process memory for one node, the
 * database for several. A failure of the backing store goes through `onStoreFailure`.
 */
export class FlexibleRateLimiter implements RateLimiter {
  private readonly limiters = new Map<string, RateLimiterAbstract>();

  constructor(
    private readonly create: LimiterFactory,
    private readonly onStoreFailure: (error: unknown) => unknown = (error) => error,
  ) {}

  async consume(rule: RateRule, key: string, points = 1): Promise<RateDecision> {
    try {
      const res = await this.limiterFor(rule).consume(key, points);
      return decision(rule, res, true);
    } catch (rejection) {
      // The library rejects with a RateLimiterRes when the budget is spent, an Error when its store fails.
      if (rejection instanceof RateLimiterRes) return decision(rule, rejection, false);
      throw this.onStoreFailure(rejection);
    }
  }

  async peek(rule: RateRule, key: string): Promise<RateDecision> {
    let res: RateLimiterRes | null;
    try {
      res = await this.limiterFor(rule).get(key);
    } catch (error) {
      throw this.onStoreFailure(error);
    }
    if (res === null) return { allowed: true, limit: rule.points, remaining: rule.points, resetSeconds: rule.durationSeconds };
    return decision(rule, res, res.remainingPoints > 0);
  }

  private limiterFor(rule: RateRule): RateLimiterAbstract {
    let limiter = this.limiters.get(rule.name);
    if (limiter === undefined) {
      limiter = this.create(rule, this.limiters.size === 0);
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
