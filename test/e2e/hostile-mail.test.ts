import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieClient } from '../helpers/cookie-client.js';
import { startServer, tempDataDir, type ServerProcess } from '../helpers/server-process.js';
import { splitTrace } from '../helpers/trace-headers.js';

const FIXTURES = resolve(import.meta.dirname, '../fixtures/eml');
const files = readdirSync(FIXTURES).filter((name) => name.endsWith('.eml')).sort();

/** The EHLO name the test's client gives, so the Received line can be checked exactly. */
const CLIENT_NAME = 'hostile-sender.example';

/** CRLF/LF differences are the transport's business; the bytes otherwise must round-trip. */
function normalise(bytes: Buffer): string {
  return bytes.toString('latin1').replace(/\r\n/g, '\n').replace(/\n+$/, '');
}

/**
 * The hostile corpus over real SMTP into the started program: every message is accepted
 * (250), the server stays up, and each one is readable through the API afterwards.
 */
describe('hostile messages end to end', () => {
  let server: ServerProcess;
  const data = tempDataDir();
  const client = () => new CookieClient(server.baseUrl);
  let owner: CookieClient;
  let inbox: { email: string; username: string };
  const sentIds = new Map<string, string>();

  beforeAll(async () => {
    server = await startServer({ DATABASE_URL: data.databaseUrl, RATE_LIMITS: 'off' });
    owner = client();
    inbox = (await owner.get('/api/create')).json;
  });
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
    data.cleanup();
  });

  it(`accepts all ${files.length} fixtures with 250`, async () => {
    expect(files.length).toBeGreaterThanOrEqual(20);
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: server.smtpPort, name: CLIENT_NAME, ignoreTLS: true, socketTimeout: 10_000 });
    try {
      for (const file of files) {
        const raw = readFileSync(join(FIXTURES, file));
        const info = await transport.sendMail({ envelope: { from: 'hostile@example.org', to: inbox.email }, raw });
        expect(info.response, file).toMatch(/^250 /);
        const before = new Set(sentIds.values());
        const check = await owner.get(`/api/check/${inbox.username}`);
        const fresh = check.json.emails.find((m: { id: string }) => !before.has(m.id));
        expect(fresh, `${file} is listed`).toBeDefined();
        sentIds.set(file, fresh.id);
      }
    } finally {
      transport.close();
    }
  });

  it.each(files)('%s is readable: detail, raw bytes and sanitised HTML', async (file) => {
    const id = sentIds.get(file);
    expect(id).toBeDefined();
    const detail = await owner.get(`/api/messages/${id}`);
    expect(detail.status).toBe(200);
    const html: string | null = detail.json.html;
    if (html !== null) {
      expect(html).not.toMatch(/<script|<iframe|<form|<meta|<object|<embed|javascript:|\son\w+\s*=|url\(/i);
    }
    for (const attachment of detail.json.attachments) {
      expect(attachment.filename).not.toMatch(/[/\\]|^\.\.|^\s*$/);
      const download = await fetch(`${server.baseUrl}/api/messages/${id}/attachments/${attachment.id}`, {
        headers: { cookie: `tempinbox_session=${owner.cookie('tempinbox_session')}` },
      });
      expect(download.status).toBe(200);
      expect(download.headers.get('content-disposition')).toMatch(/^attachment;/);
      expect((await download.arrayBuffer()).byteLength).toBe(attachment.size);
    }
    const raw = await fetch(`${server.baseUrl}/api/messages/${id}/raw`, { headers: { cookie: `tempinbox_session=${owner.cookie('tempinbox_session')}` } });
    expect(raw.status).toBe(200);
    // The server's trace lines, exactly; after them the bytes sent.
    const { rest } = splitTrace(Buffer.from(await raw.arrayBuffer()), {
      envelopeFrom: 'hostile@example.org',
      helo: CLIENT_NAME,
      client: '[127.0.0.1]',
      server: 'tempinbox.test',
      protocol: 'ESMTP',
    });
    expect(normalise(rest)).toBe(normalise(readFileSync(join(FIXTURES, file))));
  });

  it('is still healthy and never answered 5xx', async () => {
    expect((await client().get('/healthz')).status).toBe(200);
    const metrics = await client().get('/metrics');
    expect(metrics.text).not.toMatch(/tempinbox_http_requests_total\{[^}]*status="5\d\d"/);
  });
});
