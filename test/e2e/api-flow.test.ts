import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieClient } from '../helpers/cookie-client.js';
import { toolAvailable } from '../helpers/external-tools.js';
import { sendWithNodemailer, sendWithSwaks } from '../helpers/send-mail.js';
import { startServer, tempDataDir, type ServerProcess } from '../helpers/server-process.js';

/**
 * The whole free-tier flow against the started program: create with a cookie-keeping
 * client, deliver with real SMTP clients, read back through every read endpoint.
 */
const hasSwaks = toolAvailable('swaks', 'API flow: receives mail from swaks');

describe('API flow end to end', () => {
  let server: ServerProcess;
  const data = tempDataDir();

  beforeAll(async () => {
    server = await startServer({ DATABASE_URL: data.databaseUrl, RATE_LIMITS: 'off', DOMAINS: 'tempinbox.test,alt.test' });
  });
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
    data.cleanup();
  });

  it('creates an inbox with the contract cookie and shape, and reuses it', async () => {
    const client = new CookieClient(server.baseUrl);
    const created = await client.get('/api/create');
    expect(created.status).toBe(200);
    expect(created.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(created.headers.get('cache-control')).toBe('no-store');
    expect(created.json).toMatchObject({ success: true, domain: 'tempinbox.test', ttl: 1800 });
    expect(created.json.username).toMatch(/^[a-z][a-z0-9]{9}$/);
    expect(created.json.email).toBe(`${created.json.username}@tempinbox.test`);
    expect(Date.parse(created.json.expires_at) - Date.parse(created.json.created_at)).toBe(1800_000);
    const setCookie = created.headers.getSetCookie().join('\n');
    expect(setCookie).toMatch(/^tempinbox_session=[A-Za-z0-9_-]{43};/);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');
    expect(setCookie).toContain('Path=/');
    expect(setCookie).toContain('Max-Age=2592000');
    expect(setCookie).not.toContain('Secure');
    expect(created.headers.get('referrer-policy')).toBe('no-referrer');
    expect(created.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(created.headers.get('x-content-type-options')).toBe('nosniff');

    const again = await client.get('/api/create');
    expect(again.json.username).toBe(created.json.username);
  });

  it('receives mail from nodemailer with HTML, text and an attachment, and serves every read', async () => {
    const client = new CookieClient(server.baseUrl);
    const { json: inbox } = await client.get('/api/create');
    const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.from([0, 1, 2, 255, 254, 10])]);
    const reply = await sendWithNodemailer(server.smtpPort, {
      to: inbox.email,
      subject: 'Your code is 424242',
      text: 'Use 424242 to sign in.',
      html: '<p>Use <b>424242</b> to sign in.</p><img src=x onerror="alert(1)"><script>alert(2)</script><a href="javascript:alert(3)">x</a>',
      attachments: [{ filename: '../../etc/passwd.pdf', content: pdf, contentType: 'application/pdf' }],
    });
    expect(reply).toMatch(/^250 /);

    const check = await client.get(`/api/check/${inbox.username}`);
    expect(check.status).toBe(200);
    expect(check.json.success).toBe(true);
    expect(check.json.count).toBe(1);
    const [message] = check.json.emails;
    // nodemailer writes the display name unquoted; the header is returned as written.
    expect(message.from).toBe('Sender Name <sender@example.org>');
    expect(message.to).toContain(inbox.email);
    expect(message.subject).toBe('Your code is 424242');
    expect(message.body).toContain('Use 424242 to sign in.');
    expect(message.html).toContain('<b>424242</b>');
    expect(message.html).not.toMatch(/<script|onerror|javascript:/i);
    expect(message.id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(Number.isNaN(Date.parse(message.date))).toBe(false);
    expect(message.attachments).toHaveLength(1);
    const [attachment] = message.attachments;
    expect(attachment).toMatchObject({ content_type: 'application/pdf', size: pdf.length });
    expect(attachment.filename).not.toMatch(/[/\\]|^\.\./);

    const detail = await client.get(`/api/messages/${message.id}`);
    expect(detail.status).toBe(200);
    expect(detail.json.headers.some((h: { name: string }) => h.name.toLowerCase() === 'subject')).toBe(true);
    expect(detail.json.envelope_from).toBe('sender@example.org');

    const raw = await client.get(`/api/messages/${message.id}/raw`);
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toContain('message/rfc822');
    expect(raw.headers.get('content-disposition')).toMatch(/^attachment;/);
    expect(raw.text).toContain('Subject: Your code is 424242');

    const download = await fetch(`${server.baseUrl}/api/messages/${message.id}/attachments/${attachment.id}`, {
      headers: { cookie: `tempinbox_session=${client.cookie('tempinbox_session')}` },
    });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-disposition')).toMatch(/^attachment; filename="/);
    expect(download.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await download.arrayBuffer()).equals(pdf)).toBe(true);

    // Another session sees none of it, with the same answers as for missing things.
    const stranger = new CookieClient(server.baseUrl);
    await stranger.get('/api/create');
    expect((await stranger.get(`/api/check/${inbox.username}`)).json.error.code).toBe('inbox_not_found');
    expect((await stranger.get(`/api/messages/${message.id}`)).json.error.code).toBe('not_found');
    expect((await stranger.get(`/api/messages/${message.id}/raw`)).status).toBe(404);
    expect((await stranger.delete(`/api/messages/${message.id}`)).status).toBe(404);
  });

  it.skipIf(!hasSwaks)('receives mail from swaks', async () => {
    const client = new CookieClient(server.baseUrl);
    const { json: inbox } = await client.get('/api/create');
    const transcript = await sendWithSwaks(server.smtpPort, [
      '--to', `${inbox.username.toUpperCase()}+swaks@TEMPINBOX.TEST`,
      '--from', 'ci@example.org',
      '--header', 'Subject: hello from swaks',
      '--body', 'swaks body line',
    ]);
    expect(transcript).toMatch(/<- {2}250 /);
    const check = await client.get(`/api/check/${inbox.email}`);
    expect(check.json.count).toBe(1);
    expect(check.json.emails[0]).toMatchObject({ subject: 'hello from swaks' });
    expect(check.json.emails[0].body).toContain('swaks body line');
  });

  it('polls with since, deletes a message, and discards the inbox for a new one', async () => {
    const client = new CookieClient(server.baseUrl);
    const { json: inbox } = await client.get('/api/create');
    for (const subject of ['first', 'second', 'third']) {
      await sendWithNodemailer(server.smtpPort, { to: inbox.email, subject, text: subject });
    }
    const all = await client.get(`/api/check/${inbox.username}`);
    expect(all.json.emails.map((m: { subject: string }) => m.subject)).toEqual(['third', 'second', 'first']);
    const oldest = all.json.emails[2].id;
    const newest = all.json.emails[0].id;
    const since = await client.get(`/api/check/${inbox.username}?since=${oldest}`);
    expect(since.json.emails.map((m: { subject: string }) => m.subject)).toEqual(['third', 'second']);
    expect((await client.get(`/api/check/${inbox.username}?since=${newest}`)).json).toEqual({ success: true, count: 0, emails: [], has_more: false });

    expect((await client.delete(`/api/messages/${newest}`)).json).toEqual({ success: true });
    expect((await client.get(`/api/messages/${newest}`)).status).toBe(404);
    expect((await client.get(`/api/check/${inbox.username}`)).json.count).toBe(2);

    const session = await client.get('/api/session');
    expect(session.json).toMatchObject({ success: true, premium: false, premium_until: null, limits: { max_inboxes: 1, ttl: 1800, custom_usernames: false } });
    expect(session.json.inboxes).toEqual([expect.objectContaining({ username: inbox.username, count: 2, ttl: 1800 })]);

    expect((await client.delete(`/api/inbox/${inbox.username}`)).json).toEqual({ success: true });
    expect((await client.get(`/api/check/${inbox.username}`)).json.error.code).toBe('inbox_not_found');
    const fresh = await client.get('/api/create');
    expect(fresh.json.username).not.toBe(inbox.username);
  });

  it('lists domains without a cookie and lets create pick one', async () => {
    const anonymous = new CookieClient(server.baseUrl);
    const domains = await anonymous.get('/api/domains');
    expect(domains.json).toEqual({ domains: ['tempinbox.test', 'alt.test'] });
    expect(domains.headers.getSetCookie()).toEqual([]);
    expect(domains.headers.get('cache-control')).toContain('max-age');
    const created = await anonymous.get('/api/create?domain=alt.test');
    expect(created.json.email).toMatch(/@alt\.test$/);
  });

  it('serves the generated OpenAPI document and the operations endpoints', async () => {
    const client = new CookieClient(server.baseUrl);
    const openapi = await client.get('/api/openapi.json');
    expect(openapi.json.openapi).toBe('3.1.0');
    for (const path of ['/api/create', '/api/check/{username}', '/api/domains', '/api/premium/redeem', '/api/session', '/api/messages/{id}', '/api/messages/{id}/raw', '/api/messages/{id}/attachments/{aid}', '/api/inbox/{username}']) {
      expect(Object.keys(openapi.json.paths)).toContain(path);
    }
    expect((await client.get('/healthz')).status).toBe(200);
    expect((await client.get('/readyz')).json).toEqual({ status: 'ready' });
    const metrics = await client.get('/metrics');
    expect(metrics.text).toContain('tempinbox_smtp_messages_accepted_total');
    expect(metrics.text).toContain('tempinbox_sweeper_runs_total');
  });

  it('logs no cookie values and no message content', () => {
    const logs = server.stdout();
    expect(logs).not.toContain('424242');
    expect(logs).not.toMatch(/tempinbox_session=[A-Za-z0-9_-]{43}/);
  });
});
