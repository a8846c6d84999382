import nodemailer from 'nodemailer';
import { expect } from 'vitest';
import { CookieClient, type ClientResponse } from './cookie-client.js';

/** PUT with a JSON body (CookieClient has GET, DELETE and POST). */
export function putJson(client: CookieClient, path: string, body: unknown): Promise<ClientResponse> {
  return client.request('PUT', path, JSON.stringify(body), { 'content-type': 'application/json' });
}

/** A session with one inbox, Premium through `key` (a license key), over real HTTP. */
export async function premiumOwner(baseUrl: string, key: string): Promise<{ client: CookieClient; username: string; email: string }> {
  const client = new CookieClient(baseUrl);
  const created = await client.get('/api/create');
  expect(created.status).toBe(200);
  const redeemed = await client.postJson('/api/premium/redeem', { key });
  expect(redeemed.status, redeemed.text).toBe(200);
  return { client, username: created.json.username as string, email: created.json.email as string };
}

/** Sets the inbox's webhook and returns its secret; fails the test on anything but 200. */
export async function setWebhook(owner: { client: CookieClient; username: string }, url: string): Promise<string> {
  const put = await putJson(owner.client, `/api/inbox/${owner.username}/webhook`, { url });
  expect(put.status, put.text).toBe(200);
  return put.json.webhook.secret as string;
}

/** Polls `read` until `done` holds or `timeoutMs` passes; returns the last value either way. */
export async function until<T>(read: () => Promise<T> | T, done: (value: T) => boolean, timeoutMs = 10_000, everyMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** The `q`-quantile (0–1) of `values`, nearest rank. */
export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
}

/** A pooled SMTP sender on loopback: `send` resolves on the 250 with the time it took. */
export function smtpSender(port: number, connections = 4) {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port, ignoreTLS: true, pool: true, maxConnections: connections, socketTimeout: 10_000 });
  return {
    async send(to: string, subject: string): Promise<{ response: string; ms: number; at: number }> {
      const started = performance.now();
      const info = await transport.sendMail({ from: 'sender@example.org', to, subject, text: `body of ${subject}` });
      const at = Date.now();
      return { response: info.response, ms: performance.now() - started, at };
    },
    close: () => transport.close(),
  };
}
