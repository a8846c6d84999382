import { isAppError } from '../domain/errors.js';
import { SMTP_REFUSED_RECIPIENTS_PER_NETWORK, type FairUseRule } from '../domain/fair-use.js';
import type { FairUseService } from './fair-use-service.js';

/**
 * Refused SMTP recipients per client network as a fair-use budget (docs/api.md "SMTP abuse
 * limits"): through the RateLimiter port, so on PostgreSQL every node counts against one
 * budget, and RATE_LIMITS=off disables it like the other fair-use limits.
 */
export class RefusedRecipientBudget {
  constructor(
    private readonly fairUse: FairUseService,
    private readonly rule: FairUseRule = SMTP_REFUSED_RECIPIENTS_PER_NETWORK,
  ) {}

  /** True when the network of `clientAddress` has no refusals left (checked at connect). */
  async isSpent(clientAddress: string): Promise<boolean> {
    try {
      await this.fairUse.assertNotExhausted(this.rule, clientAddress);
      return false;
    } catch (error) {
      if (isAppError(error) && error.code === 'rate_limited') return true;
      throw error;
    }
  }

  /** Counts one refused recipient; false when it was past the network's budget. */
  record(clientAddress: string): Promise<boolean> {
    return this.fairUse.recordFailure(this.rule, clientAddress);
  }
}
