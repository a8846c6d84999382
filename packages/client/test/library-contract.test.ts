import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../../../test/helpers/server-process.js';
import { TempInboxClient, TempInboxError } from '../src/index.js';
import { startKitServer, type KitServer } from './kit-server.js';

/**
 * The library's names and shapes as a user's TypeScript sees them: the declarations below are
 * checked by `npm run typecheck`, so a type that strays from the documented one fails there.
 */
describe('the library as documented', () => {
  let kit: KitServer;
  beforeAll(async () => {
    kit = await startKitServer({ RATE_LIMITS: 'off' });
  }, 60_000);
  afterAll(async () => kit?.close());

  it('gives a created inbox, and each of inboxes(), an expiresAt that is a Date', async () => {
    const client = new TempInboxClient({ baseUrl: kit.server.baseUrl });
    const inbox = await client.createInbox();
    const address: string = inbox.address;
    const username: string = inbox.username;
    const domain: string = inbox.domain;
    const expiresAt: Date = inbox.expiresAt;
    expect({ address, username, domain }).toEqual({ address: `${username}@tempinbox.test`, username: expect.stringMatching(/^[a-z][a-z0-9]{9}$/), domain: 'tempinbox.test' });
    expect(expiresAt).toBeInstanceOf(Date);
    expect(expiresAt.getTime() - Date.now()).toBeGreaterThan(29 * 60_000);
    const [listed] = await client.inboxes();
    const listedExpiry: Date | undefined = listed?.expiresAt;
    expect(listedExpiry?.toISOString()).toBe(expiresAt.toISOString());
    const session: string | undefined = client.session;
    expect(session).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('redeems a key into { premium, premium_until, limits } and nothing else', async () => {
    const minted = await runBin(['license', 'create'], { DATABASE_URL: kit.databaseUrl });
    expect(minted.code).toBe(0);
    const client = new TempInboxClient({ baseUrl: kit.server.baseUrl });
    const redeemed = await client.redeem(minted.stdout.trim());
    expect(redeemed).toEqual({ premium: true, premium_until: expect.any(String), limits: { max_inboxes: 10, ttl: 2_592_000, custom_usernames: true } });
    const named = await client.createInbox({ username: `kit-${Date.now().toString(36)}` });
    expect(named.expiresAt).toBeInstanceOf(Date);
  });

  it('refuses a baseUrl that is no http(s) URL when it is made, so that calls fail only with TempInboxError', async () => {
    expect(() => new TempInboxClient({ baseUrl: 'not a url' })).toThrow(TypeError);
    expect(() => new TempInboxClient({ baseUrl: 'ftp://127.0.0.1/' })).toThrow(/http/);
    const unreachable = await new TempInboxClient({ baseUrl: 'http://127.0.0.1:9/' }).domains().catch((caught: unknown) => caught);
    expect(unreachable).toBeInstanceOf(TempInboxError);
    expect(unreachable).toMatchObject({ status: 0, code: 'network_error' });
  });
});
