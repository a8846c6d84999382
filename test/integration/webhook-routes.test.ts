import { describe, expect, it } from 'vitest';
import { verifyWebhookSignature } from '../../src/domain/webhook-signature.js';
import { sharedTestApp, type TestApp } from '../helpers/build-test-app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * The webhook routes (docs/api.md "Webhooks") through Fastify's inject on an app over a real
 * SQLite file. Receivers listen on 127.0.0.1, which WEBHOOK_ALLOWED_NETWORKS opens for these
 * tests; no test sets a URL that leaves loopback, so the worker never sends a packet elsewhere.
 */

function cookieOf(setCookie: string | string[] | undefined): string {
  const line = Array.isArray(setCookie) ? (setCookie[0] ?? '') : (setCookie ?? '');
  return line.split(';')[0] ?? '';
}

/** A new session with one inbox; Premium when asked (a minted license redeemed into it). */
async function owner(app: TestApp['app'], premium: boolean): Promise<{ cookie: string; username: string; email: string }> {
  const created = await app.http.inject({ method: 'GET', url: '/api/create' });
  const cookie = cookieOf(created.headers['set-cookie']);
  const { username, email } = created.json<{ username: string; email: string }>();
  if (premium) {
    const [key = ''] = await app.licenses.mint({ count: 1, days: 30, maxSessions: 5 });
    const redeemed = await app.http.inject({ method: 'POST', url: '/api/premium/redeem', headers: { cookie }, payload: { key } });
    expect(redeemed.statusCode).toBe(200);
  }
  return { cookie, username, email };
}

async function until<T>(read: () => Promise<T> | T, done: (value: T) => boolean, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('webhook routes', () => {
  const shared = sharedTestApp({ store: 'sqlite', env: { WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1/32' } });

  const withReceiver = async (test: (receiver: WebhookReceiver) => Promise<void>): Promise<void> => {
    const receiver = await startWebhookReceiver();
    try {
      await test(receiver);
    } finally {
      await receiver.close();
    }
  };

  it('PUT sets the webhook and shows the secret once; GET shows the URL without it; DELETE removes it', async () => {
    const { app } = shared();
    const { cookie, username } = await owner(app, true);
    const put = await app.http.inject({ method: 'PUT', url: `/api/inbox/${username}/webhook`, headers: { cookie }, payload: { url: 'http://127.0.0.1:9/in?x=1' } });
    expect(put.statusCode).toBe(200);
    expect(put.headers['cache-control']).toBe('no-store');
    const set = put.json<{ success: true; webhook: { url: string; secret: string; created_at: string } }>();
    expect(set.webhook.url).toBe('http://127.0.0.1:9/in?x=1');
    expect(set.webhook.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const get = await app.http.inject({ method: 'GET', url: `/api/inbox/${username}/webhook`, headers: { cookie } });
    expect(get.statusCode).toBe(200);
    expect(get.json()).toEqual({ success: true, webhook: { url: 'http://127.0.0.1:9/in?x=1', created_at: set.webhook.created_at }, deliveries: [] });
    expect(get.body).not.toContain(set.webhook.secret);
    const given = await app.http.inject({ method: 'PUT', url: `/api/inbox/${username}/webhook`, headers: { cookie }, payload: { url: 'http://127.0.0.1:9/', secret: 'my-own-secret-0123' } });
    expect(given.json<{ webhook: { secret: string } }>().webhook.secret).toBe('my-own-secret-0123');
    const deleted = await app.http.inject({ method: 'DELETE', url: `/api/inbox/${username}/webhook`, headers: { cookie } });
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json()).toEqual({ success: true });
    const after = await app.http.inject({ method: 'GET', url: `/api/inbox/${username}/webhook`, headers: { cookie } });
    expect(after.json()).toMatchObject({ webhook: null });
  });

  it('answers the contract\'s errors: premium_required, inbox_not_found, invalid_request, webhook_url_forbidden, webhook_not_found', async () => {
    const { app } = shared();
    const free = await owner(app, false);
    const premium = await owner(app, true);
    const put = (who: { cookie: string }, username: string, payload: unknown) =>
      app.http.inject({ method: 'PUT', url: `/api/inbox/${username}/webhook`, headers: { cookie: who.cookie }, payload: payload as object });
    const codeOf = (response: { json: <T>() => T }) => response.json<{ error: { code: string } }>().error.code;

    const refusedFree = await put(free, free.username, { url: 'http://127.0.0.1:9/' });
    expect([refusedFree.statusCode, codeOf(refusedFree)]).toEqual([403, 'premium_required']);
    const foreign = await put(premium, free.username, { url: 'http://127.0.0.1:9/' });
    expect([foreign.statusCode, codeOf(foreign)]).toEqual([404, 'inbox_not_found']);
    for (const payload of [{ url: 'ftp://127.0.0.1/' }, { url: 'http://user:pw@127.0.0.1/' }, { url: `http://127.0.0.1/${'a'.repeat(2100)}` }, { url: 'http://127.0.0.1/', secret: 'short' }, { url: 42 }, {}]) {
      const bad = await put(premium, premium.username, payload);
      expect([bad.statusCode, codeOf(bad)], JSON.stringify(payload).slice(0, 80)).toEqual([400, 'invalid_request']);
    }
    // Only 127.0.0.1/32 is allowed here: the rest of loopback and ::1 are not.
    for (const url of ['http://127.0.0.2/', 'http://[::1]/', 'http://10.0.0.1/', 'http://169.254.169.254/', 'http://[::ffff:7f00:2]/']) {
      const forbidden = await put(premium, premium.username, { url });
      expect([forbidden.statusCode, codeOf(forbidden)], url).toEqual([400, 'webhook_url_forbidden']);
    }
    const test = await app.http.inject({ method: 'POST', url: `/api/inbox/${premium.username}/webhook/test`, headers: { cookie: premium.cookie } });
    expect([test.statusCode, codeOf(test)]).toEqual([404, 'webhook_not_found']);
    const freeTest = await app.http.inject({ method: 'POST', url: `/api/inbox/${free.username}/webhook/test`, headers: { cookie: free.cookie } });
    expect([freeTest.statusCode, codeOf(freeTest)]).toEqual([403, 'premium_required']);
    // GET and DELETE need only ownership: a free session may read and remove.
    expect((await app.http.inject({ method: 'GET', url: `/api/inbox/${free.username}/webhook`, headers: { cookie: free.cookie } })).statusCode).toBe(200);
    expect((await app.http.inject({ method: 'DELETE', url: `/api/inbox/${free.username}/webhook`, headers: { cookie: free.cookie } })).statusCode).toBe(200);
    const foreignGet = await app.http.inject({ method: 'GET', url: `/api/inbox/${free.username}/webhook`, headers: { cookie: premium.cookie } });
    expect([foreignGet.statusCode, codeOf(foreignGet)]).toEqual([404, 'inbox_not_found']);
    const noSession = await app.http.inject({ method: 'GET', url: `/api/inbox/${free.username}/webhook` });
    expect([noSession.statusCode, codeOf(noSession)]).toEqual([401, 'session_required']);
  });

  it('refuses PUT, DELETE and the test from another site\'s page (cross_site_request), changing nothing', async () => {
    const { app } = shared();
    const { cookie, username } = await owner(app, true);
    const headers = { cookie, 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors' };
    for (const [method, url] of [['PUT', `/api/inbox/${username}/webhook`], ['DELETE', `/api/inbox/${username}/webhook`], ['POST', `/api/inbox/${username}/webhook/test`]] as const) {
      const forged = await app.http.inject({ method, url, headers, payload: { url: 'http://127.0.0.1:9/' } });
      expect([forged.statusCode, forged.json<{ error: { code: string } }>().error.code], `${method} ${url}`).toEqual([403, 'cross_site_request']);
    }
    expect((await app.http.inject({ method: 'GET', url: `/api/inbox/${username}/webhook`, headers: { cookie } })).json()).toMatchObject({ webhook: null });
  });

  it('POST …/test owes one signed message.test delivery, listed by GET with message_id null', async () => {
    await withReceiver(async (receiver) => {
      const { app } = shared();
      const { cookie, username, email } = await owner(app, true);
      const put = await app.http.inject({ method: 'PUT', url: `/api/inbox/${username}/webhook`, headers: { cookie }, payload: { url: `http://127.0.0.1:${receiver.port}/hook` } });
      const { secret } = put.json<{ webhook: { secret: string } }>().webhook;
      const test = await app.http.inject({ method: 'POST', url: `/api/inbox/${username}/webhook/test`, headers: { cookie } });
      expect(test.statusCode).toBe(200);
      const { id } = test.json<{ success: true; delivery: { id: string } }>().delivery;
      await until(() => receiver.requests.length, (n) => n >= 1);
      const [request] = receiver.requests;
      expect(request?.headers['tempinbox-delivery']).toBe(id);
      expect(request?.headers['user-agent']).toMatch(/^tempinbox-webhook\/\d+\.\d+\.\d+/);
      expect(request?.headers['content-type']).toBe('application/json');
      expect(JSON.parse(request?.body ?? '')).toEqual({ event: 'message.test', inbox: email, message: null });
      expect(await verifyWebhookSignature(secret, String(request?.headers['tempinbox-signature']), request?.body ?? '', 60)).toBe(true);
      const listed = await until(
        async () => (await app.http.inject({ method: 'GET', url: `/api/inbox/${username}/webhook`, headers: { cookie } })).json<{ deliveries: unknown[] }>(),
        (answer) => answer.deliveries.length > 0,
      );
      expect(listed.deliveries).toEqual([{ id, message_id: null, attempt: 1, status: 200, error: null, at: expect.any(String) }]);
    });
  });

  it('a message stored in the inbox is posted as check lists it; deleting the inbox drops its webhook', async () => {
    await withReceiver(async (receiver) => {
      const { app } = shared();
      const { cookie, username, email } = await owner(app, true);
      await app.http.inject({ method: 'PUT', url: `/api/inbox/${username}/webhook`, headers: { cookie }, payload: { url: `http://127.0.0.1:${receiver.port}/hook` } });
      const recipient = await app.delivery.acceptRecipient(email, 0);
      const delivered = await app.delivery.deliver('sender@example.org', [recipient], Buffer.from('Subject: hi\r\n\r\nyour code is 123456\r\n'));
      await until(() => receiver.requests.length, (n) => n >= 1);
      const body = JSON.parse(receiver.requests[0]?.body ?? '{}') as { event: string; inbox: string; message: { id: string } };
      const check = await app.http.inject({ method: 'GET', url: `/api/check/${username}`, headers: { cookie } });
      expect(body).toEqual({ event: 'message.received', inbox: email, message: check.json<{ emails: unknown[] }>().emails[0] });
      expect(body.message.id).toBe(delivered.messageIds[0]);
      const listed = await until(
        async () => (await app.http.inject({ method: 'GET', url: `/api/inbox/${username}/webhook`, headers: { cookie } })).json<{ deliveries: Array<{ message_id: string }> }>(),
        (answer) => answer.deliveries.length > 0,
      );
      expect(listed.deliveries[0]?.message_id).toBe(delivered.messageIds[0]);
      // The inbox's webhook rows name it (foreign keys): its deletion must take them first.
      expect((await app.http.inject({ method: 'DELETE', url: `/api/inbox/${username}`, headers: { cookie } })).statusCode).toBe(200);
      const tables = ['webhooks', 'webhook_deliveries', 'webhook_attempts'];
      const { sqlite } = shared();
      for (const table of tables) {
        expect((sqlite().prepare(`select count(*) as n from ${table} where inbox_id not in (select id from inboxes)`).get() as { n: number }).n, table).toBe(0);
      }
    });
  });
});
