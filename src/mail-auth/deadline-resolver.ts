import type { DnsLookup } from './dns-answer-cache.js';

/** The error a look-up gets once the message's budget is spent; mailauth reports it as `temperror`. */
export function dnsBudgetSpent(): Error {
  return Object.assign(new Error('DNS time budget of the message spent'), { code: 'ETIMEOUT' });
}

/**
 * A resolver for one message: every look-up shares one deadline (DNS_TIMEOUT_MS after the
 * first), so however many look-ups the checks make (SPF includes, DKIM keys, the DMARC tree
 * walk), the message waits at most that long for DNS in all. A look-up still pending at
 * the deadline is abandoned (its answer may still fill the cache) and fails as ETIMEOUT.
 */
export function deadlineResolver(lookup: DnsLookup, deadlineAt: number, now: () => number = Date.now): DnsLookup {
  return (name, rrtype) => {
    const remaining = deadlineAt - now();
    if (remaining <= 0) return Promise.reject(dnsBudgetSpent());
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(dnsBudgetSpent()), remaining);
      lookup(name, rrtype).then(
        (answer) => {
          clearTimeout(timer);
          resolve(answer);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error instanceof Error ? error : new Error(String(error)));
        },
      );
    });
  };
}
