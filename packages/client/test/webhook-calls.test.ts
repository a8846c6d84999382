import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { TempInboxClient, TempInboxError, type WebhookCreated, type WebhookState } from '../src/index.js';

/** One request the fake server saw. */
interface Seen {
  method: string;
  url: string;
  body: string;
}

/**
 * A local HTTP server that answers each request with the next scripted answer: the requests
 * the webhook calls make, and what they make of the server's answers, without a real server.
 */
async function scriptedServer(answers: Array<{ status: number; body: unknown }>): Promise<{ url: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      seen.push({ method: request.method ?? '', url: request.url ?? '', body: Buffer.concat(chunks).toString('utf8') });
      const answer = answers[Math.min(seen.length - 1, answers.length - 1)];
      if (answer === undefined) throw new Error('no answers');
      response.writeHead(answer.status, { 'content-type': 'application/json; charset=utf-8' });
      response.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { url: `http://127.0.0.1:${address.port}`, seen, close: () => new Promise((done) => server.close(() => done())) };
}

const CREATED_AT = '2026-11-27T12:00:00.000Z';

describe('webhook calls', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  it('setWebhook PUTs url and secret to the inbox\'s webhook and gives { url, secret, created_at }', async () => {
    const fake = await scriptedServer([{ status: 200, body: { success: true, webhook: { url: 'https://hooks.example/in', secret: 's'.repeat(43), created_at: CREATED_AT } } }]);
    close = fake.close;
    const inbox = new TempInboxClient({ baseUrl: fake.url }).inbox('box@tempinbox.test');
    const created: WebhookCreated = await inbox.setWebhook('https://hooks.example/in', { secret: 'a-secret-of-16-chars' });
    expect(created).toEqual({ url: 'https://hooks.example/in', secret: 's'.repeat(43), created_at: CREATED_AT });
    expect(fake.seen).toEqual([{ method: 'PUT', url: '/api/inbox/box%40tempinbox.test/webhook', body: '{"url":"https://hooks.example/in","secret":"a-secret-of-16-chars"}' }]);
  });

  it('setWebhook without a secret sends none (the server makes one)', async () => {
    const fake = await scriptedServer([{ status: 200, body: { success: true, webhook: { url: 'https://hooks.example/in', secret: 'x'.repeat(43), created_at: CREATED_AT } } }]);
    close = fake.close;
    await new TempInboxClient({ baseUrl: fake.url }).inbox('box').setWebhook('https://hooks.example/in');
    expect(fake.seen[0]?.body).toBe('{"url":"https://hooks.example/in"}');
  });

  it('webhook() GETs the webhook and its deliveries, without success', async () => {
    const state: WebhookState = {
      webhook: { url: 'https://hooks.example/in', created_at: CREATED_AT },
      deliveries: [
        { id: 'd2', message_id: null, attempt: 1, status: 200, error: null, at: CREATED_AT },
        { id: 'd1', message_id: 'AAAAAAAAAAAAAAAAAAAAAB', attempt: 2, status: null, error: 'timeout', at: CREATED_AT },
      ],
    };
    const fake = await scriptedServer([{ status: 200, body: { success: true, ...state } }, { status: 200, body: { success: true, webhook: null, deliveries: [] } }]);
    close = fake.close;
    const inbox = new TempInboxClient({ baseUrl: fake.url }).inbox('box');
    expect(await inbox.webhook()).toEqual(state);
    expect(await inbox.webhook()).toEqual({ webhook: null, deliveries: [] });
    expect(fake.seen.map(({ method, url }) => `${method} ${url}`)).toEqual(['GET /api/inbox/box/webhook', 'GET /api/inbox/box/webhook']);
  });

  it('deleteWebhook DELETEs it', async () => {
    const fake = await scriptedServer([{ status: 200, body: { success: true } }]);
    close = fake.close;
    await new TempInboxClient({ baseUrl: fake.url }).inbox('box').deleteWebhook();
    expect(fake.seen.map(({ method, url }) => `${method} ${url}`)).toEqual(['DELETE /api/inbox/box/webhook']);
  });

  it('turns the API\'s refusals into TempInboxError with status and code', async () => {
    const refusal = (status: number, code: string) => ({ status, body: { success: false, error: { code, message: `because ${code}` } } });
    const fake = await scriptedServer([refusal(403, 'premium_required'), refusal(400, 'webhook_url_forbidden'), refusal(404, 'webhook_not_found')]);
    close = fake.close;
    const inbox = new TempInboxClient({ baseUrl: fake.url }).inbox('box');
    const failures = [
      await inbox.setWebhook('https://hooks.example/in').catch((caught: unknown) => caught),
      await inbox.setWebhook('http://127.0.0.1/').catch((caught: unknown) => caught),
      await inbox.deleteWebhook().catch((caught: unknown) => caught),
    ];
    for (const failure of failures) expect(failure).toBeInstanceOf(TempInboxError);
    expect(failures.map((failure) => [(failure as TempInboxError).status, (failure as TempInboxError).code, (failure as TempInboxError).message])).toEqual([
      [403, 'premium_required', 'because premium_required'],
      [400, 'webhook_url_forbidden', 'because webhook_url_forbidden'],
      [404, 'webhook_not_found', 'because webhook_not_found'],
    ]);
  });
});
