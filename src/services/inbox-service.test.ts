import { describe, expect, it } from 'vitest';
import { codeOf, serviceFixture } from '../../test/helpers/service-fixture.js';


describe('InboxService on a free session', () => {
  it('creates a generated inbox and reuses it while it is active', async () => {
    const f = serviceFixture();
    const { session } = await f.newSession();
    const first = await f.inboxes.create(session, {}, '127.0.0.1');
    expect(first.reused).toBe(false);
    expect(first.inbox.username).toMatch(/^[a-z][a-z0-9]{9}$/);
    expect(first.inbox.domain).toBe('tempinbox.test');
    expect(first.inbox.expiresAt.getTime() - first.inbox.createdAt.getTime()).toBe(1800_000);
    const again = await f.inboxes.create(session, {}, '127.0.0.1');
    expect(again.reused).toBe(true);
    expect(again.inbox.id).toBe(first.inbox.id);
  });

  it('gives a new address once the old one has expired', async () => {
    const f = serviceFixture();
    const { session } = await f.newSession();
    const first = await f.inboxes.create(session, {}, 'ip');
    f.clock.advance(1800_000);
    const second = await f.inboxes.create(session, {}, 'ip');
    expect(second.reused).toBe(false);
    expect(second.inbox.username).not.toBe(first.inbox.username);
  });

  it('refuses custom usernames with premium_required', async () => {
    const f = serviceFixture();
    const { session } = await f.newSession();
    expect(await codeOf(f.inboxes.create(session, { username: 'alice' }, 'ip'))).toBe('premium_required');
  });

  it('rejects a domain that is not served', async () => {
    const f = serviceFixture();
    const { session } = await f.newSession();
    expect(await codeOf(f.inboxes.create(session, { domain: 'evil.test' }, 'ip'))).toBe('invalid_domain');
    const ok = await f.inboxes.create(session, { domain: 'OTHER.test' }, 'ip');
    expect(ok.inbox.domain).toBe('other.test');
  });

  it('answers 410 then 404 across expiry and sweep (fake clock, no sleeps)', async () => {
    const f = serviceFixture();
    const { session } = await f.newSession();
    const { inbox } = await f.inboxes.create(session, {}, 'ip');
    await f.send(`${inbox.username}@tempinbox.test`, 'code 123');
    expect(await f.check(session, inbox.username)).toHaveLength(1);
    f.clock.advance(1799_999);
    expect(await f.check(session, inbox.username)).toHaveLength(1);
    f.clock.advance(1);
    expect(await codeOf(f.check(session, inbox.username))).toBe('inbox_expired');
    expect(await codeOf(f.delivery.acceptRecipient(`${inbox.username}@tempinbox.test`, 0))).toBe('inbox_expired');
    const swept = await f.sweep.runOnce();
    expect(swept).toMatchObject({ inboxes: 1, messages: 1 });
    expect(await codeOf(f.check(session, inbox.username))).toBe('inbox_not_found');
  });

  it('hides foreign inboxes behind the same answer as missing ones', async () => {
    const f = serviceFixture();
    const alice = await f.newSession();
    const mallory = await f.newSession();
    const { inbox } = await f.inboxes.create(alice.session, {}, 'ip');
    expect(await codeOf(f.check(mallory.session, inbox.username))).toBe('inbox_not_found');
    expect(await codeOf(f.check(mallory.session, 'nosuchname'))).toBe('inbox_not_found');
    expect(await codeOf(f.inboxes.discard(mallory.session, inbox.username))).toBe('inbox_not_found');
  });

  it('accepts a full address, case-insensitively, and checks its domain', async () => {
    const f = serviceFixture();
    const { session } = await f.newSession();
    const { inbox } = await f.inboxes.create(session, {}, 'ip');
    expect(await f.check(session, `${inbox.username.toUpperCase()}@TEMPINBOX.test`)).toEqual([]);
    expect(await codeOf(f.check(session, `${inbox.username}@other.test`))).toBe('inbox_not_found');
    expect(await codeOf(f.check(session, 'a'))).toBe('username_invalid');
  });

  it('returns messages newest first and only newer ones with since', async () => {
    const f = serviceFixture();
    const { session } = await f.newSession();
    const { inbox } = await f.inboxes.create(session, {}, 'ip');
    const address = `${inbox.username}@tempinbox.test`;
    const first = await f.send(address, 'one');
    await f.send(address, 'two');
    await f.send(address, 'three');
    expect((await f.check(session, inbox.username)).map((m) => m.subject)).toEqual(['three', 'two', 'one']);
    expect((await f.check(session, inbox.username, first)).map((m) => m.subject)).toEqual(['three', 'two']);
    expect(await codeOf(f.check(session, inbox.username, 'not an id'))).toBe('invalid_request');
  });

  it('lets a free session discard its inbox and get a new one', async () => {
    const f = serviceFixture();
    const { session } = await f.newSession();
    const { inbox } = await f.inboxes.create(session, {}, 'ip');
    await f.inboxes.discard(session, inbox.username);
    const next = await f.inboxes.create(session, {}, 'ip');
    expect(next.reused).toBe(false);
    expect(next.inbox.username).not.toBe(inbox.username);
  });

  it('rate-limits inbox creation per client address when limits are on', async () => {
    const f = serviceFixture({ rateLimits: true });
    let code = 'no error';
    for (let i = 0; i < 40 && code === 'no error'; i += 1) {
      const { session } = await f.newSession();
      code = await codeOf(f.inboxes.create(session, {}, '203.0.113.9'));
    }
    expect(code).toBe('rate_limited');
    const { session } = await f.newSession();
    expect(await codeOf(f.inboxes.create(session, {}, '203.0.113.10'))).toBe('no error');
  });
});
