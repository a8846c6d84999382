import { describe, expect, it } from 'vitest';
import { hashSecret } from '../domain/ids.js';
import { codeOf, serviceFixture } from '../../test/helpers/service-fixture.js';

describe('LicenseService', () => {
  it('stores only hashes of minted keys', async () => {
    const f = serviceFixture();
    const [key] = await f.licenses.mint({ count: 1, days: 30, maxSessions: 5 });
    const [row] = await f.licenses.list();
    expect(row?.keyHash).toBe(hashSecret(key ?? ''));
    expect(JSON.stringify(row)).not.toContain(key);
  });

  it('redeems, adopts the free inbox and extends it to created_at + 30 days', async () => {
    const f = serviceFixture();
    const [key = ''] = await f.licenses.mint({ count: 1, days: 30, maxSessions: 5 });
    const { session } = await f.newSession();
    const { inbox } = await f.inboxes.create(session, {}, 'ip');
    f.clock.advance(60_000);
    const result = await f.licenses.redeem(session, key, 'ip');
    expect(result.limits).toEqual({ max_inboxes: 10, ttl: 2_592_000, custom_usernames: true });
    const adopted = await f.store.findInboxById(inbox.id);
    expect(adopted?.expiresAt.getTime()).toBe(inbox.createdAt.getTime() + 2_592_000_000);
    expect(adopted?.licenseId).not.toBeNull();
    // Redeeming again in the same session is fine.
    await expect(f.licenses.redeem(session, key, 'ip')).resolves.toMatchObject({ limits: { max_inboxes: 10 } });
  });

  it('shares license inboxes with every session that redeemed the key', async () => {
    const f = serviceFixture();
    const [key = ''] = await f.licenses.mint({ count: 1, days: 30, maxSessions: 5 });
    const phone = await f.newSession();
    const laptop = await f.newSession();
    await f.licenses.redeem(phone.session, key, 'ip');
    const { inbox } = await f.inboxes.create(phone.session, { username: 'Team.Alerts' }, 'ip');
    expect(inbox.username).toBe('team.alerts');
    await f.licenses.redeem(laptop.session, key, 'ip');
    await f.send('team.alerts+ci@tempinbox.test', 'deploy');
    expect((await f.check(laptop.session, 'team.alerts')).map((m) => m.subject)).toEqual(['deploy']);
    const overview = await f.inboxes.overview(laptop.session);
    expect(overview.premium).toBe(true);
    expect(overview.inboxes.map((i) => i.username)).toContain('team.alerts');
  });

  it('enforces custom-username rules: own name reused, held and reserved names taken', async () => {
    const f = serviceFixture();
    const [a = '', b = ''] = await f.licenses.mint({ count: 2, days: 30, maxSessions: 5 });
    const alice = await f.newSession();
    const bob = await f.newSession();
    await f.licenses.redeem(alice.session, a, 'ip');
    await f.licenses.redeem(bob.session, b, 'ip');
    const created = await f.inboxes.create(alice.session, { username: 'shared' }, 'ip');
    expect(await f.inboxes.create(alice.session, { username: 'SHARED' }, 'ip')).toEqual({ inbox: created.inbox, reused: true });
    expect(await codeOf(f.inboxes.create(bob.session, { username: 'shared' }, 'ip'))).toBe('username_taken');
    expect(await codeOf(f.inboxes.create(bob.session, { username: 'postmaster' }, 'ip'))).toBe('username_taken');
    expect(await codeOf(f.inboxes.create(bob.session, { username: 'x' }, 'ip'))).toBe('username_invalid');
  });

  it('frees an expired custom name for a new holder, without the old mail', async () => {
    const f = serviceFixture({ plan: { premiumTtlSeconds: 60 } });
    const [a = '', b = ''] = await f.licenses.mint({ count: 2, days: 30, maxSessions: 5 });
    const alice = await f.newSession();
    const bob = await f.newSession();
    await f.licenses.redeem(alice.session, a, 'ip');
    await f.licenses.redeem(bob.session, b, 'ip');
    await f.inboxes.create(alice.session, { username: 'recycled' }, 'ip');
    await f.send('recycled@tempinbox.test', 'secret for alice');
    f.clock.advance(60_000);
    const taken = await f.inboxes.create(bob.session, { username: 'recycled' }, 'ip');
    expect(taken.reused).toBe(false);
    expect(await f.check(bob.session, 'recycled')).toEqual([]);
  });

  it('stops at the license inbox maximum', async () => {
    const f = serviceFixture({ plan: { premiumMaxInboxes: 3 } });
    const [key = ''] = await f.licenses.mint({ count: 1, days: 30, maxSessions: 5 });
    const { session } = await f.newSession();
    await f.licenses.redeem(session, key, 'ip');
    for (let i = 0; i < 3; i += 1) await f.inboxes.create(session, {}, 'ip');
    expect(await codeOf(f.inboxes.create(session, {}, 'ip'))).toBe('inbox_limit_reached');
    expect(await codeOf(f.inboxes.create(session, { username: 'one-more' }, 'ip'))).toBe('inbox_limit_reached');
  });

  it('answers license_invalid for unknown, malformed and revoked keys alike', async () => {
    const f = serviceFixture();
    const [key = ''] = await f.licenses.mint({ count: 1, days: 30, maxSessions: 5 });
    const { session } = await f.newSession();
    expect(await codeOf(f.licenses.redeem(session, 'TI-00000000-00000000-00000000-00000000', 'ip'))).toBe('license_invalid');
    expect(await codeOf(f.licenses.redeem(session, 'garbage', 'ip'))).toBe('license_invalid');
    expect(await f.licenses.revoke(key)).toBe(true);
    expect(await codeOf(f.licenses.redeem(session, key, 'ip'))).toBe('license_invalid');
    expect(await f.licenses.revoke('TI-00000000-00000000-00000000-00000000')).toBe(false);
  });

  it('answers license_expired after valid_until, and the session is free again', async () => {
    const f = serviceFixture();
    const [key = ''] = await f.licenses.mint({ count: 1, days: 1, maxSessions: 5 });
    const { session } = await f.newSession();
    await f.licenses.redeem(session, key, 'ip');
    const premiumInbox = await f.inboxes.create(session, { username: 'kept' }, 'ip');
    f.clock.advance(86_400_000);
    expect(await codeOf(f.licenses.redeem(session, key, 'ip'))).toBe('license_expired');
    expect(await codeOf(f.inboxes.create(session, { username: 'another' }, 'ip'))).toBe('premium_required');
    const overview = await f.inboxes.overview(session);
    expect(overview.premium).toBe(false);
    // Inboxes keep the expiry they had and stay readable.
    expect(overview.inboxes.map((i) => i.id)).toContain(premiumInbox.inbox.id);
  });

  it('limits the sessions per license', async () => {
    const f = serviceFixture();
    const [key = ''] = await f.licenses.mint({ count: 1, days: 30, maxSessions: 2 });
    for (let i = 0; i < 2; i += 1) await f.licenses.redeem((await f.newSession()).session, key, 'ip');
    expect(await codeOf(f.licenses.redeem((await f.newSession()).session, key, 'ip'))).toBe('license_session_limit');
  });

  it('blocks brute force after 10 failed redeems per address, even for a good key', async () => {
    const f = serviceFixture({ rateLimits: true });
    const [key = ''] = await f.licenses.mint({ count: 1, days: 30, maxSessions: 5 });
    const { session } = await f.newSession();
    for (let i = 0; i < 10; i += 1) {
      expect(await codeOf(f.licenses.redeem(session, `TI-${'0'.repeat(8)}-${'0'.repeat(8)}-${'0'.repeat(8)}-0000000${i}`, '198.51.100.7'))).toBe('license_invalid');
    }
    expect(await codeOf(f.licenses.redeem(session, key, '198.51.100.7'))).toBe('rate_limited');
    expect(await codeOf(f.licenses.redeem(session, key, '198.51.100.8'))).toBe('no error');
  });
});
