import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../../../test/helpers/postgres-test-database.js';
import { TempInboxClient, WaitTimeoutError } from '../src/index.js';
import { deliver, deliverMany, sleep, startKitServer, type KitServer } from './kit-server.js';

const withPostgres = await postgresAvailable('the client library waits');

/** The wait semantics on each database the server runs on. */
describe.each([
  { backend: 'SQLite', skip: false },
  { backend: 'PostgreSQL', skip: !withPostgres },
])('waits on $backend', ({ backend, skip }) => {
  let kit: KitServer;
  let database: TestDatabase | undefined;

  beforeAll(async () => {
    if (skip) return;
    const env: Record<string, string> = { FREE_MAX_MESSAGES: '200' };
    if (backend === 'PostgreSQL') {
      database = await createTestDatabase();
      env.DATABASE_URL = database.url;
    }
    kit = await startKitServer(env);
  }, 60_000);
  afterAll(async () => {
    await kit?.close();
    await database?.drop();
  });

  const newInbox = async () => {
    const client = new TempInboxClient({ baseUrl: kit.server.baseUrl });
    return { client, inbox: await client.createInbox() };
  };

  it.skipIf(skip)('answers within 1 s of the SMTP 250, after being held', async () => {
    const { inbox } = await newInbox();
    const started = Date.now();
    const waiting = inbox.waitForMessage({ timeout: 20_000 });
    await sleep(500);
    expect(await deliver(kit.server.smtpPort, inbox.address, 'wake up')).toMatch(/^250/);
    const acked = Date.now();
    const message = await waiting;
    const answered = Date.now();
    expect(message.subject).toBe('wake up');
    expect(answered - acked).toBeLessThan(1000);
    expect(answered - started).toBeGreaterThanOrEqual(500);
  });

  it.skipIf(skip)('returns mail that arrived before the wait at once, and two waits two messages in arrival order', async () => {
    const { inbox } = await newInbox();
    await deliver(kit.server.smtpPort, inbox.address, 'first', 'Your code is 111111');
    await deliver(kit.server.smtpPort, inbox.address, 'second', 'Your code is 222222');
    const started = Date.now();
    const first = await inbox.waitForCode({ timeout: 10_000 });
    expect(Date.now() - started).toBeLessThan(1000);
    const second = await inbox.waitForCode({ timeout: 10_000 });
    expect([first.code, second.code]).toEqual(['111111', '222222']);
    expect(first.message.subject).toBe('first');
    // A third has nothing left: both were returned.
    await expect(inbox.waitForCode({ timeout: 1_500 })).rejects.toBeInstanceOf(WaitTimeoutError);
  });

  it.skipIf(skip)('gives waits with different filters, asked in reverse order, each its own message', async () => {
    const { inbox } = await newInbox();
    const [user, domain] = inbox.address.split('@');
    const forB = inbox.waitForMessage({ to: `${user}+b@`, timeout: 15_000 });
    const forA = inbox.waitForMessage({ to: `${user}+a@`, timeout: 15_000 });
    await sleep(300);
    await deliver(kit.server.smtpPort, `${user}+a@${domain}`, 'for a');
    await deliver(kit.server.smtpPort, `${user}+b@${domain}`, 'for b');
    expect((await forB).subject).toBe('for b');
    expect((await forA).subject).toBe('for a');
  });

  it.skipIf(skip)('rejects with WaitTimeoutError naming its filters within the timeout + 1 s', async () => {
    const { inbox } = await newInbox();
    const started = Date.now();
    const error = await inbox.waitForMessage({ subject: 'never', timeout: 2_000 }).catch((caught: unknown) => caught);
    const elapsed = Date.now() - started;
    expect(error).toBeInstanceOf(WaitTimeoutError);
    expect(error).toMatchObject({ code: 'timeout', status: 0 });
    expect((error as Error).message).toContain('subject="never"');
    expect(elapsed).toBeGreaterThanOrEqual(2_000 - 50);
    expect(elapsed).toBeLessThan(3_000);
  });

  it.skipIf(skip)('finds the oldest of 110 messages (two pages), then the next, and waits past them for a new one', async () => {
    const { inbox } = await newInbox();
    await deliverMany(kit.server.smtpPort, inbox.address, 'bulk', 110);
    expect((await inbox.waitForMessage({ timeout: 10_000 })).subject).toBe('bulk-0');
    expect((await inbox.waitForMessage({ timeout: 10_000 })).subject).toBe('bulk-1');
    expect((await inbox.waitForMessage({ subject: 'bulk-109', timeout: 10_000 })).subject).toBe('bulk-109');
    const late = inbox.waitForMessage({ subject: 'late', timeout: 15_000 });
    await sleep(300);
    await deliver(kit.server.smtpPort, inbox.address, 'late');
    expect((await late).subject).toBe('late');
  }, 60_000);
});
