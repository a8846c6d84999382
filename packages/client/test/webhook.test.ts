import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin } from '../../../test/helpers/server-process.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/helpers/webhook-receiver.js';
import { TempInboxClient, TempInboxError, verifyWebhookSignature, type WebhookCreated, type WebhookDelivery, type WebhookState } from '../src/index.js';
import { deliver, sleep, startKitServer, type KitServer } from './kit-server.js';

/** A delivery reaches the receiver, and its attempt is listed, within this time (the first starts within 1 s). */
const DELIVERY_MS = 15_000;
/** How often the test looks at the receiver and the listing. */
const POLL_MS = 50;

/** Resolves once `ready()` is true; fails after DELIVERY_MS. */
async function until(what: string, ready: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + DELIVERY_MS;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${DELIVERY_MS} ms`);
    await sleep(POLL_MS);
  }
}

/** The library's webhook calls against the real server, with a receiver on loopback. */
describe('webhooks through the library', () => {
  let kit: KitServer;
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    // Loopback is not public: the receiver is reachable only through this opening.
    [kit, receiver] = await Promise.all([startKitServer({ RATE_LIMITS: 'off', WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' }), startWebhookReceiver()]);
  }, 60_000);
  afterAll(async () => {
    await receiver?.close();
    await kit?.close();
  });

  async function premiumClient(): Promise<TempInboxClient> {
    const minted = await runBin(['license', 'create'], { DATABASE_URL: kit.databaseUrl });
    expect(minted.code).toBe(0);
    const client = new TempInboxClient({ baseUrl: kit.server.baseUrl });
    await client.redeem(minted.stdout.trim());
    return client;
  }

  it('sets a webhook whose deliveries verifyWebhookSignature accepts, lists the attempt, and deletes it', async () => {
    const client = await premiumClient();
    const inbox = await client.createInbox();
    const url = `http://127.0.0.1:${receiver.port}/library`;
    const created: WebhookCreated = await inbox.setWebhook(url);
    expect(created).toEqual({ url, secret: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), created_at: expect.any(String) });

    const before = receiver.requests.length;
    await deliver(kit.server.smtpPort, inbox.address, 'for the library');
    await until('the delivery', () => receiver.requests.length > before);
    const posted = receiver.requests[before];
    const header = String(posted?.headers['tempinbox-signature']);
    const body = posted?.body ?? '';
    expect(await verifyWebhookSignature(created.secret, header, body, 60)).toBe(true);
    expect(await verifyWebhookSignature(created.secret, header, new TextEncoder().encode(body), 60)).toBe(true);
    expect(await verifyWebhookSignature(`${created.secret}x`, header, body, 60)).toBe(false);
    const payload = JSON.parse(body) as { event: string; inbox: string; message: { id: string; subject: string } };
    expect(payload).toMatchObject({ event: 'message.received', inbox: inbox.address, message: { subject: 'for the library' } });

    let state: WebhookState = await inbox.webhook();
    await until('the listed attempt', async () => (state = await inbox.webhook()).deliveries.length > 0);
    expect(state.webhook).toEqual({ url, created_at: created.created_at });
    const [attempt] = state.deliveries;
    const expected: WebhookDelivery = { id: String(posted?.headers['tempinbox-delivery']), message_id: payload.message.id, attempt: 1, status: 200, error: null, at: expect.any(String) };
    expect(attempt).toEqual(expected);

    // Deleted: no webhook; the record of past attempts stays readable.
    await inbox.deleteWebhook();
    expect((await inbox.webhook()).webhook).toBeNull();
  });

  it('replaces the webhook with a second setWebhook, keeping the secret it is given', async () => {
    const inbox = await (await premiumClient()).createInbox();
    const first = await inbox.setWebhook(`http://127.0.0.1:${receiver.port}/first`, { secret: 'library-secret-000001' });
    const second = await inbox.setWebhook(`http://127.0.0.1:${receiver.port}/second`, { secret: 'library-secret-000002' });
    expect([first.secret, second.secret]).toEqual(['library-secret-000001', 'library-secret-000002']);
    expect((await inbox.webhook()).webhook?.url).toBe(`http://127.0.0.1:${receiver.port}/second`);
  });

  it('refuses with typed errors: a free session, an address that is not public, a bad URL or secret', async () => {
    const free = await new TempInboxClient({ baseUrl: kit.server.baseUrl }).createInbox();
    const codeOf = async (call: Promise<unknown>) => {
      const failure = await call.then(() => undefined, (caught: unknown) => caught);
      expect(failure).toBeInstanceOf(TempInboxError);
      return [(failure as TempInboxError).status, (failure as TempInboxError).code];
    };
    expect(await codeOf(free.setWebhook(`http://127.0.0.1:${receiver.port}/free`))).toEqual([403, 'premium_required']);
    expect(await free.webhook()).toEqual({ webhook: null, deliveries: [] });

    const inbox = await (await premiumClient()).createInbox();
    expect(await codeOf(inbox.setWebhook('http://10.1.2.3/hook'))).toEqual([400, 'webhook_url_forbidden']);
    expect(await codeOf(inbox.setWebhook('http://169.254.169.254/latest/meta-data'))).toEqual([400, 'webhook_url_forbidden']);
    expect(await codeOf(inbox.setWebhook('ftp://127.0.0.1/hook'))).toEqual([400, 'invalid_request']);
    expect(await codeOf(inbox.setWebhook(`http://user:pw@127.0.0.1:${receiver.port}/`))).toEqual([400, 'invalid_request']);
    expect(await codeOf(inbox.setWebhook(`http://127.0.0.1:${receiver.port}/`, { secret: 'short' }))).toEqual([400, 'invalid_request']);
  });
});
