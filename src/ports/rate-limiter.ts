/** A fair-use rule: at most `points` per `durationSeconds` for one key. */
export interface RateRule {
  /** Stable name; also the counter namespace (e.g. `create_ip`). */
  name: string;
  points: number;
  durationSeconds: number;
}

/** The state of one key under one rule after a consume or peek. */
export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets (>= 1 when not allowed). */
  resetSeconds: number;
}

/**
 * Counters for fair use. The in-memory adapter serves one node; a shared store (the
 * database) serves many, so that N nodes do not give a client N times its quota.
 */
export interface RateLimiter {
  /** Counts `points` (default 1) against the key and says whether it stayed within the rule. */
  consume(rule: RateRule, key: string, points?: number): Promise<RateDecision>;
  /** The key's state without counting anything. */
  peek(rule: RateRule, key: string): Promise<RateDecision>;
}
