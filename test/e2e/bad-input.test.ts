import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieClient } from '../helpers/cookie-client.js';
import { startServer, tempDataDir, type ServerProcess } from '../helpers/server-process.js';

/** Sends bytes on a raw socket and returns what came back (bounded by a timeout). */
function rawHttp(port: number, payload: string): Promise<string> {
  return new Promise((done) => {
    const socket = connect(port, '127.0.0.1');
    let received = '';
    const timer = setTimeout(() => socket.destroy(), 5000);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('close', () => {
      clearTimeout(timer);
      done(received);
    });
    socket.on('error', () => undefined);
    socket.write(payload);
    setTimeout(() => socket.end(), 300);
  });
}

describe('bad input always gets a JSON 4xx', () => {
  let server: ServerProcess;
  const data = tempDataDir();
  let client: CookieClient;
  let username = '';

  beforeAll(async () => {
    server = await startServer({ DATABASE_URL: data.databaseUrl, RATE_LIMITS: 'off' });
    client = new CookieClient(server.baseUrl);
    username = (await client.get('/api/create')).json.username;
  });
  afterAll(async () => {
    await server.stop();
    data.cleanup();
  });

  const paths = [
    '/api/check/%', '/api/check/%00', '/api/check/%E0%A4%A', '/api/check/' + 'a'.repeat(600), '/api/check/..%2F..%2Fetc%2Fpasswd',
    '/api/check/a@b@c', '/api/check/@', '/api/check/%20', '/api/check/😀😀😀', '/api/messages/%', '/api/messages/' + 'x'.repeat(80),
    '/api/messages/../../etc/passwd', '/api/messages/AAAAAAAAAAAAAAAAAAAAAA/attachments/%ZZ', '/api/messages/AAAAAAAAAAAAAAAAAAAAAA/raw',
    '/api/create?username=%', '/api/create?username=a&username=b', '/api/create?domain=' + 'd'.repeat(300), '/api/create?domain=%00',
    '/api/create?username=' + 'u'.repeat(400), '/api/check/x?since=' + 's'.repeat(100), '/api/check/x?since[]=1', '/api/inbox/%', '/api/',
    '/api', '/api/session/extra', '/api/domains/x', '//api//create', '/api/create/../check',
  ];

  it.each(paths)('GET %s', async (path) => {
    const response = await client.get(path);
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
    expect(response.json?.success).toBe(false);
    expect(response.json.error.code).toMatch(/^[a-z_]+$/);
  });

  const bodies: Array<[string, string]> = [
    ['application/json', ''],
    ['application/json', 'null'],
    ['application/json', '[]'],
    ['application/json', '"key"'],
    ['application/json', '{"key": 5}'],
    ['application/json', '{"key": ""}'],
    ['application/json', '{"__proto__": {"polluted": true}, "key": "x"}'],
    ['application/json', '{"constructor": {"prototype": {"polluted": true}}}'],
    ['application/json', '{"key": "\u0000\u0001"}'],
    ['application/json', '\u00ff\u00fe'],
    ['text/plain', '{"key":"x"}'],
    ['application/x-www-form-urlencoded', 'key=x'],
    ['multipart/form-data; boundary=x', '--x--'],
    ['application/json; charset=utf-16', '{"key":"x"}'],
  ];

  it.each(bodies)('POST redeem with %s %j', async (contentType, body) => {
    const response = await client.request('POST', '/api/premium/redeem', body, { 'content-type': contentType });
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
    expect(response.json.success).toBe(false);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  const cookies = ['tempinbox_session=', 'tempinbox_session=%', 'tempinbox_session=' + 'A'.repeat(43), 'tempinbox_session="quoted"', 'tempinbox_session=' + 'x'.repeat(4000), '=;;;=', 'tempinbox_session=a; tempinbox_session=b'];

  it.each(cookies)('treats cookie %j as no session', async (cookie) => {
    const response = await client.get(`/api/check/${username}`, { cookie });
    // Overrides the jar's cookie header: fetch merges by replacing the same header name.
    expect([401, 404]).toContain(response.status);
    expect(response.json.success).toBe(false);
  });

  it('answers non-HTTP bytes and broken requests with 400, and stays up', async () => {
    for (const payload of ['\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03', 'GET / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', 'HELO there\r\n', 'GET /api/create HTTP/9.9\r\n\r\n']) {
      const answer = await rawHttp(server.httpPort, payload);
      if (answer.length > 0) expect(answer).toMatch(/^HTTP\/1\.1 4\d\d/);
    }
    expect((await client.get('/healthz')).status).toBe(200);
  });

  it('never answered 5xx during the whole run', async () => {
    const metrics = await client.get('/metrics');
    expect(metrics.text).not.toMatch(/tempinbox_http_requests_total\{[^}]*status="5\d\d"/);
  });
});
