import type pg from 'pg';
import { RateLimiterPostgres } from 'rate-limiter-flexible';
import { StoreUnavailableError } from '../ports/mail-store.js';
import { FlexibleRateLimiter } from './flexible-rate-limiter.js';

/**
 * Fair-use counters in the shared PostgreSQL database (rate-limiter-flexible's
 * RateLimiterPostgres: one atomic INSERT … ON CONFLICT DO UPDATE per hit), so every node
 * counts against the same budget and N nodes do not give a client N times its quota
 * (docs/scaling.md). `tableName` is the table the migrations made (RATE_LIMIT_TABLE). When the
 * database is unreachable a check fails as StoreUnavailableError (503 unavailable), never
 * as a 500 and never by letting the request through uncounted.
 */
export class PostgresRateLimiter extends FlexibleRateLimiter {
  constructor(pool: pg.Pool, tableName: string) {
    super(
      (rule, first) =>
        new RateLimiterPostgres({
          storeClient: pool,
          storeType: 'pool',
          tableName,
          tableCreated: true,
          keyPrefix: rule.name,
          points: rule.points,
          duration: rule.durationSeconds,
          // All rules share the table: one limiter per process deletes long-expired rows
          // (every 5 minutes, rows expired for an hour); more would repeat the same delete.
          clearExpiredByTimeout: first,
        }),
      (error) => {
        const reason = error instanceof Error ? error.message : String(error);
        return new StoreUnavailableError(`fair-use counter failed: ${reason}`, { cause: error });
      },
    );
  }
}
