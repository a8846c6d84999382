import { MemoryRateLimiter } from '../../src/rate-limit/memory-rate-limiter.js';
import { FairUseService } from '../../src/services/fair-use-service.js';

/** A FairUseService over in-memory counters, limits on (service unit tests may not import adapters). */
export function memoryFairUse(enabled = true): FairUseService {
  return new FairUseService(new MemoryRateLimiter(), enabled);
}
