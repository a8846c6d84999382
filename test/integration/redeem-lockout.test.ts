import { describe, expect, it } from 'vitest';
import { FAILED_REDEEM_PER_ADDRESS } from '../../src/domain/fair-use.js';
import { buildTestApp } from '../helpers/build-test-app.js';

/**
 * A redeem refused by the failed-redeem lockout stores nothing: no session row, no Set-Cookie
 * (docs/api.md "Premium licenses"). Counted in the real SQLite file.
 */
describe('redeem refused by the failed-redeem lockout', () => {
  /** Refused calls made after the lockout: each used to store a 30-day session. */
  const REFUSED_CALLS = 100;
  const attacker = '203.0.113.7';
  const badKey = { key: 'TI-AAAAAAAA-AAAAAAAA-AAAAAAAA-AAAAAAAA' };

  it('makes no session and sets no cookie, with or without a cookie, while a good key from elsewhere still works', async () => {
    const { app, sqlite } = await buildTestApp({ store: 'sqlite', env: { RATE_LIMITS: 'on' } });
    const sessionRows = (): number => (sqlite().prepare('SELECT count(*) AS n FROM sessions').get() as { n: number }).n;
    const redeem = (payload: object, remoteAddress: string, cookie?: string) =>
      app.http.inject({ method: 'POST', url: '/api/premium/redeem', payload, remoteAddress, headers: cookie === undefined ? {} : { cookie } });

    // Spend the budget: each failed cookie-less redeem makes a session (docs/api.md decision 4).
    let lastCookie = '';
    for (let i = 0; i < FAILED_REDEEM_PER_ADDRESS.points; i += 1) {
      const failed = await redeem(badKey, attacker);
      expect(failed.statusCode).toBe(400);
      lastCookie = String(failed.headers['set-cookie']).split(';')[0] ?? '';
    }
    const afterBudget = sessionRows();
    expect(afterBudget).toBe(FAILED_REDEEM_PER_ADDRESS.points);

    const [goodKey = ''] = await app.licenses.mint({ count: 1, days: 30, maxSessions: 5 });
    for (let i = 0; i < REFUSED_CALLS; i += 1) {
      const refused = await redeem(i % 2 === 0 ? badKey : { key: goodKey }, attacker);
      expect(refused.statusCode).toBe(429);
      expect(refused.json()).toMatchObject({ success: false, error: { code: 'rate_limited' } });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(refused.headers['set-cookie']).toBeUndefined();
    }
    // With the cookie of an existing session: refused, and not even renewed.
    const withCookie = await redeem({ key: goodKey }, attacker, lastCookie);
    expect(withCookie.statusCode).toBe(429);
    expect(withCookie.headers['set-cookie']).toBeUndefined();
    expect(sessionRows()).toBe(afterBudget);

    const elsewhere = await redeem({ key: goodKey }, '198.51.100.9');
    expect(elsewhere.statusCode).toBe(200);
    expect(elsewhere.headers['set-cookie']).toBeDefined();
    expect(sessionRows()).toBe(afterBudget + 1);
  });
});
