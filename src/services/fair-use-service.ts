import { AppError } from '../domain/errors.js';
import { fairUseKey, type FairUseRule } from '../domain/fair-use.js';
import type { RateDecision, RateLimiter } from '../ports/rate-limiter.js';

/**
 * Applies fair-use rules through the RateLimiter port. Disabled (RATE_LIMITS=off) it
 * allows everything and reports nothing; message caps are not its business. Callers pass
 * the raw client address; the rule decides what it is counted as (fairUseKey), so no
 * caller can key IPv6 on the full address by mistake.
 */
export class FairUseService {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly enabled: boolean,
  ) {}

  /**
   * Counts one hit against every rule; throws rate_limited when any is exhausted. Returns the
   * tightest budget (for the RateLimit-* headers), or null when limits are off.
   */
  async consume(checks: Array<[FairUseRule, string]>): Promise<RateDecision | null> {
    if (!this.enabled) return null;
    let tightest: RateDecision | null = null;
    for (const [rule, key] of checks) {
      const decision = await this.limiter.consume(rule, fairUseKey(rule, key));
      if (!decision.allowed) throw rateLimited(decision);
      if (tightest === null || decision.remaining < tightest.remaining) tightest = decision;
    }
    return tightest;
  }

  /** Throws rate_limited when the rule is already exhausted for the key, without counting. */
  async assertNotExhausted(rule: FairUseRule, key: string): Promise<void> {
    if (!this.enabled) return;
    const decision = await this.limiter.peek(rule, fairUseKey(rule, key));
    if (!decision.allowed || decision.remaining <= 0) throw rateLimited({ ...decision, allowed: false });
  }

  /**
   * Counts a failure (e.g. a failed redeem) without judging this request. Resolves false when
   * this failure was past the budget, true while within it or when limits are off.
   */
  async recordFailure(rule: FairUseRule, key: string): Promise<boolean> {
    if (!this.enabled) return true;
    const decision = await this.limiter.consume(rule, fairUseKey(rule, key));
    return decision.allowed;
  }
}

/** A rate_limited error carrying when to retry. */
export function rateLimited(decision: RateDecision): AppError {
  return new AppError('rate_limited', undefined, {
    retryAfterSeconds: Math.max(1, Math.ceil(decision.resetSeconds)),
    rateLimit: decision.limit,
  });
}
