import { describe, expect, it } from 'vitest';
import { CREATE_PER_ADDRESS, CREATE_PER_SESSION, SMTP_REFUSED_RECIPIENTS_PER_NETWORK } from '../domain/fair-use.js';
import { memoryFairUse } from '../../test/helpers/memory-fair-use.js';
import type { FairUseService } from './fair-use-service.js';

/** Spends a rule's whole budget for one key, one hit at a time (bounded by the rule's points). */
async function spend(fairUse: FairUseService, rule: typeof CREATE_PER_ADDRESS, key: string): Promise<void> {
  for (let i = 0; i < rule.points; i += 1) await fairUse.consume([[rule, key]]);
}

describe('FairUseService keys', () => {
  it('counts every IPv6 address of one /64 against one per-client budget', async () => {
    const fairUse = memoryFairUse();
    await spend(fairUse, CREATE_PER_ADDRESS, '2001:db8:1:2::1');
    await expect(fairUse.consume([[CREATE_PER_ADDRESS, '2001:db8:1:2:dead:beef:0:7']])).rejects.toMatchObject({ code: 'rate_limited' });
    await expect(fairUse.assertNotExhausted(CREATE_PER_ADDRESS, '2001:db8:1:2::ffff')).rejects.toMatchObject({ code: 'rate_limited' });
    // Another /64 has its own budget; so has an IPv4 client, keyed on its whole address.
    await expect(fairUse.consume([[CREATE_PER_ADDRESS, '2001:db8:1:3::1']])).resolves.not.toBeNull();
    await spend(fairUse, CREATE_PER_ADDRESS, '192.0.2.1');
    await expect(fairUse.consume([[CREATE_PER_ADDRESS, '::ffff:192.0.2.1']])).rejects.toMatchObject({ code: 'rate_limited' });
    await expect(fairUse.consume([[CREATE_PER_ADDRESS, '192.0.2.2']])).resolves.not.toBeNull();
  });

  it('never rewrites a session key', async () => {
    const fairUse = memoryFairUse();
    await spend(fairUse, CREATE_PER_SESSION, '2001:db8:1:2::1');
    await expect(fairUse.consume([[CREATE_PER_SESSION, '2001:db8:1:2::2']])).resolves.not.toBeNull();
  });

  it('counts refused recipients per network: an IPv4 /24', async () => {
    const fairUse = memoryFairUse();
    for (let i = 0; i < SMTP_REFUSED_RECIPIENTS_PER_NETWORK.points; i += 1) {
      await fairUse.recordFailure(SMTP_REFUSED_RECIPIENTS_PER_NETWORK, `198.51.100.${i % 200}`);
    }
    await expect(fairUse.assertNotExhausted(SMTP_REFUSED_RECIPIENTS_PER_NETWORK, '198.51.100.250')).rejects.toMatchObject({ code: 'rate_limited' });
    await expect(fairUse.assertNotExhausted(SMTP_REFUSED_RECIPIENTS_PER_NETWORK, '198.51.101.1')).resolves.toBeUndefined();
  });

  it('counts nothing with RATE_LIMITS=off: every failure is within budget', async () => {
    const fairUse = memoryFairUse(false);
    for (let i = 0; i <= SMTP_REFUSED_RECIPIENTS_PER_NETWORK.points; i += 1) {
      expect(await fairUse.recordFailure(SMTP_REFUSED_RECIPIENTS_PER_NETWORK, '198.51.100.1')).toBe(true);
    }
    await expect(fairUse.assertNotExhausted(SMTP_REFUSED_RECIPIENTS_PER_NETWORK, '198.51.100.1')).resolves.toBeUndefined();
  });
});
