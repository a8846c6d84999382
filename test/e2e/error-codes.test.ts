import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieClient, type ClientResponse } from '../helpers/cookie-client.js';
import { sendWithNodemailer } from '../helpers/send-mail.js';
import { runBin, startServer, tempDataDir, type ServerProcess } from '../helpers/server-process.js';

/** Asserts the contract's error shape, status and code. */
function expectError(response: ClientResponse, status: number, code: string): void {
  expect({ status: response.status, body: response.json }).toMatchObject({ status, body: { success: false, error: { code } } });
  expect(typeof response.json.error.message).toBe('string');
  expect(response.json.error.message.length).toBeGreaterThan(0);
  expect(response.text).not.toMatch(/\bat .*\.js:\d+/); // no stack trace
}

/** Every error code of docs/api.md provoked against the started program (unavailable: see http-outage test). */
describe('error codes end to end', () => {
  let server: ServerProcess;
  const data = tempDataDir();
  const env = { DATABASE_URL: data.databaseUrl, RATE_LIMITS: 'off', PREMIUM_MAX_INBOXES: '2', FREE_TTL_SECONDS: '2' };

  async function mint(args: string[] = []): Promise<string> {
    const result = await runBin(['license', 'create', ...args], env);
    expect(result.code).toBe(0);
    return result.stdout.trim();
  }

  beforeAll(async () => {
    server = await startServer(env);
  });
  afterAll(async () => {
    await server.stop();
    data.cleanup();
  });

  it('invalid_request, session_required, not_found, method_not_allowed, payload_too_large', async () => {
    const client = new CookieClient(server.baseUrl);
    const { json: inbox } = await client.get('/api/create');
    expectError(await client.get(`/api/check/${inbox.username}?since=%ZZ`), 400, 'invalid_request');
    expectError(await client.get(`/api/check/${inbox.username}?since=short`), 400, 'invalid_request');
    expectError(await client.request('POST', '/api/premium/redeem', '{"key":', { 'content-type': 'application/json' }), 400, 'invalid_request');
    expectError(await client.request('POST', '/api/premium/redeem', 'key=x', { 'content-type': 'text/plain' }), 400, 'invalid_request');
    expectError(await client.postJson('/api/premium/redeem', { nokey: 1 }), 400, 'invalid_request');
    expectError(await new CookieClient(server.baseUrl).get(`/api/check/${inbox.username}`), 401, 'session_required');
    expectError(await client.get('/api/nothing-here'), 404, 'not_found');
    expectError(await client.get('/api/messages/AAAAAAAAAAAAAAAAAAAAAA'), 404, 'not_found');
    const wrongMethod = await client.request('POST', '/api/create');
    expectError(wrongMethod, 405, 'method_not_allowed');
    expect(wrongMethod.headers.get('allow')).toContain('GET');
    expectError(await client.postJson('/api/premium/redeem', { key: 'x'.repeat(20_000) }), 413, 'payload_too_large');
  });

  it('username_invalid, invalid_domain, premium_required, inbox_not_found', async () => {
    const client = new CookieClient(server.baseUrl);
    await client.get('/api/create');
    expectError(await client.get('/api/create?username=alice'), 403, 'premium_required');
    expectError(await client.get('/api/create?domain=evil.example'), 400, 'invalid_domain');
    expectError(await client.get('/api/check/no'), 400, 'username_invalid');
    expectError(await client.get('/api/check/nosuchinbox'), 404, 'inbox_not_found');
  });

  it('cross_site_request: a state-changing call a page of another site made; nothing is stored', async () => {
    const client = new CookieClient(server.baseUrl);
    const { json: inbox } = await client.get('/api/create');
    const crossSite = { 'sec-fetch-site': 'cross-site' };
    const stranger = new CookieClient(server.baseUrl);
    const forged = await stranger.get('/api/create', crossSite);
    expectError(forged, 403, 'cross_site_request');
    expect(forged.headers.getSetCookie()).toEqual([]);
    expectError(await client.get('/api/create?username=forged', crossSite), 403, 'cross_site_request');
    expectError(await client.request('POST', '/api/premium/redeem', '{"key":"x"}', { 'content-type': 'application/json', ...crossSite }), 403, 'cross_site_request');
    expectError(await client.request('DELETE', `/api/inbox/${inbox.username}`, undefined, crossSite), 403, 'cross_site_request');
    expect((await client.get(`/api/check/${inbox.username}`)).status).toBe(200);
  });

  it('license_invalid, username_taken, inbox_limit_reached, license_session_limit, license_expired', async () => {
    const key = await mint(['--max-sessions', '2']);
    expect(key).toMatch(/^TI(-[0-9A-Z]{8}){4}$/);
    const premium = new CookieClient(server.baseUrl);
    expectError(await premium.postJson('/api/premium/redeem', { key: 'TI-00000000-00000000-00000000-00000000' }), 400, 'license_invalid');
    const redeemed = await premium.postJson('/api/premium/redeem', { key });
    expect(redeemed.status).toBe(200);
    expect(redeemed.json).toMatchObject({ success: true, premium: true, limits: { max_inboxes: 2, ttl: 2_592_000, custom_usernames: true } });
    expect(premium.cookie('tempinbox_session')).toBeDefined();

    const custom = await premium.get('/api/create?username=Custom.Name');
    expect(custom.json).toMatchObject({ success: true, username: 'custom.name', ttl: 2_592_000 });
    expectError(await premium.get('/api/create?username=bad..name'), 400, 'username_invalid');
    expectError(await premium.get('/api/create?username=postmaster'), 409, 'username_taken');
    await premium.get('/api/create');
    expectError(await premium.get('/api/create'), 403, 'inbox_limit_reached');

    const other = new CookieClient(server.baseUrl);
    const otherKey = await mint();
    await other.postJson('/api/premium/redeem', { key: otherKey });
    expectError(await other.get('/api/create?username=custom.name'), 409, 'username_taken');

    await new CookieClient(server.baseUrl).postJson('/api/premium/redeem', { key });
    expectError(await new CookieClient(server.baseUrl).postJson('/api/premium/redeem', { key }), 409, 'license_session_limit');

    // Expire the other license in the database itself (no clock to move in a separate process).
    const db = new Database(join(data.dir, 'tempinbox.db'));
    db.prepare('UPDATE licenses SET valid_until = ?').run(Date.now() - 1000);
    db.close();
    expectError(await new CookieClient(server.baseUrl).postJson('/api/premium/redeem', { key: otherKey }), 410, 'license_expired');

    const revoke = await runBin(['license', 'revoke', otherKey], env);
    expect(revoke).toMatchObject({ code: 0, stdout: 'revoked\n' });
    expectError(await new CookieClient(server.baseUrl).postJson('/api/premium/redeem', { key: otherKey }), 400, 'license_invalid');
  });

  it('inbox_expired while unswept (sweeper at its 60 s default), then SMTP 550 for it', async () => {
    const client = new CookieClient(server.baseUrl);
    const { json: inbox } = await client.get('/api/create');
    await sendWithNodemailer(server.smtpPort, { to: inbox.email, subject: 'before expiry', text: 'x' });
    const before = await client.get(`/api/check/${inbox.username}`);
    expect(before.json.count).toBe(1);
    await new Promise((done) => setTimeout(done, 2100)); // FREE_TTL_SECONDS=2 in this server
    expectError(await client.get(`/api/check/${inbox.username}`), 410, 'inbox_expired');
    expectError(await client.get(`/api/messages/${before.json.emails[0].id}`), 410, 'inbox_expired');
    await expect(sendWithNodemailer(server.smtpPort, { to: inbox.email, subject: 'late', text: 'x' })).rejects.toThrow(/550/);

  });
});

describe('expiry sweeper end to end', () => {
  let server: ServerProcess;
  const data = tempDataDir();

  beforeAll(async () => {
    server = await startServer({ DATABASE_URL: data.databaseUrl, RATE_LIMITS: 'off', FREE_TTL_SECONDS: '1', SWEEP_INTERVAL_SECONDS: '1' });
  });
  afterAll(async () => {
    await server.stop();
    data.cleanup();
  });

  it('deletes an expired inbox with its mail: the owner then gets 404, and metrics count it', async () => {
    const client = new CookieClient(server.baseUrl);
    const { json: inbox } = await client.get('/api/create');
    await sendWithNodemailer(server.smtpPort, { to: inbox.email, subject: 'soon gone', text: 'x' });
    let after = await client.get(`/api/check/${inbox.username}`);
    for (let i = 0; i < 60 && after.status !== 404; i += 1) {
      await new Promise((done) => setTimeout(done, 100));
      after = await client.get(`/api/check/${inbox.username}`);
    }
    expectError(after, 404, 'inbox_not_found');
    const metrics = await client.get('/metrics');
    expect(Number(/tempinbox_sweeper_deleted_total\{kind="inboxes"\} (\d+)/.exec(metrics.text)?.[1])).toBeGreaterThanOrEqual(1);
    expect(Number(/tempinbox_sweeper_deleted_total\{kind="messages"\} (\d+)/.exec(metrics.text)?.[1])).toBeGreaterThanOrEqual(1);
  });
});

describe('rate limits end to end', () => {
  let server: ServerProcess;
  const data = tempDataDir();

  beforeAll(async () => {
    server = await startServer({ DATABASE_URL: data.databaseUrl, RATE_LIMITS: 'on' });
  });
  afterAll(async () => {
    await server.stop();
    data.cleanup();
  });

  it('answers 429 rate_limited with Retry-After after 10 failed redeems from one address', async () => {
    const client = new CookieClient(server.baseUrl);
    for (let i = 0; i < 10; i += 1) {
      const failed = await client.postJson('/api/premium/redeem', { key: 'not-a-key' });
      expect(failed.status).toBe(400);
    }
    const limited = await client.postJson('/api/premium/redeem', { key: 'not-a-key' });
    expectError(limited, 429, 'rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // The headers describe the exhausted budget (10 failed redeems an hour), not another one.
    expect(limited.headers.get('ratelimit-limit')).toBe('10');
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
  });

  it('sends RateLimit-* headers on polls and limits cookie-less creation per address', async () => {
    const client = new CookieClient(server.baseUrl);
    const { json: inbox } = await client.get('/api/create');
    const poll = await client.get(`/api/check/${inbox.username}`);
    expect(Number(poll.headers.get('ratelimit-limit'))).toBeGreaterThan(0);
    expect(poll.headers.get('ratelimit-remaining')).not.toBeNull();
    let last: ClientResponse = poll;
    for (let i = 0; i < 40 && last.status !== 429; i += 1) last = await new CookieClient(server.baseUrl).get('/api/create');
    expectError(last, 429, 'rate_limited');
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
