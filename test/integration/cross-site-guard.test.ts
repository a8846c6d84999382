import Fastify, { type RouteOptions } from 'fastify';
import { describe, expect, it } from 'vitest';
import { rejectCrossSite } from '../../src/http/cross-site-guard.js';
import type { HttpDeps } from '../../src/http/http-deps.js';
import { registerRoutes } from '../../src/http/routes.js';
import { sharedTestApp } from '../helpers/build-test-app.js';

/**
 * The Fetch Metadata guard on every state-changing route (docs/api.md "Session cookie"), through
 * Fastify's inject on an app over a real SQLite file: a page of another site, and any
 * navigation (a link or a form, even on our own origin, such as a link in a mail) gets
 * `403 cross_site_request` and changes nothing; the web app's fetch() (`same-origin`, mode
 * `cors`) and clients that send no such header (curl, the CLI) work as before.
 */

/** The first `name=value` pair of a Set-Cookie answer, to send back as Cookie. */
function cookieOf(setCookie: string | string[] | undefined): string {
  const line = Array.isArray(setCookie) ? (setCookie[0] ?? '') : (setCookie ?? '');
  return line.split(';')[0] ?? '';
}

describe('Sec-Fetch-Site and Sec-Fetch-Mode guard on state-changing routes', () => {
  // One app for the block: every test makes its own victim, and counts rows before and after.
  const shared = sharedTestApp({ store: 'sqlite' });

  /** The app over a real SQLite file, with row counts read from the file. */
  function guardedApp() {
    const { app, sqlite } = shared();
    const count = (table: string): number => (sqlite().prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    const rows = (sql: string): unknown[] => sqlite().prepare(sql).all();

    /** A premium session with one inbox holding one message: everything a forged request could harm. */
    async function victim(): Promise<{ cookie: string; username: string; messageId: string; key: string }> {
      const [key = ''] = await app.licenses.mint({ count: 1, days: 30, maxSessions: 5 });
      const created = await app.http.inject({ method: 'GET', url: '/api/create' });
      expect(created.statusCode).toBe(200);
      const cookie = cookieOf(created.headers['set-cookie']);
      const username = created.json<{ username: string }>().username;
      const redeemed = await app.http.inject({ method: 'POST', url: '/api/premium/redeem', headers: { cookie }, payload: { key } });
      expect(redeemed.statusCode).toBe(200);
      const recipient = await app.delivery.acceptRecipient(`${username}@tempinbox.test`, 0);
      const delivered = await app.delivery.deliver('sender@example.org', [recipient], Buffer.from('Subject: hi\r\n\r\nhello\r\n'));
      return { cookie, username, messageId: delivered.messageIds[0] ?? '', key };
    }

    return { app, count, rows, victim };
  }

  /** Every state-changing route of the table, as a forged request would send it. */
  function forgeries(v: { cookie: string; username: string; messageId: string; key: string }) {
    return [
      { name: 'GET /api/create', method: 'GET' as const, url: '/api/create?username=victimx' },
      { name: 'HEAD /api/create', method: 'HEAD' as const, url: '/api/create?username=victimh' },
      { name: 'POST /api/premium/redeem', method: 'POST' as const, url: '/api/premium/redeem', payload: { key: v.key } },
      { name: 'DELETE /api/messages/<id>', method: 'DELETE' as const, url: `/api/messages/${v.messageId}` },
      { name: 'DELETE /api/inbox/<username>', method: 'DELETE' as const, url: `/api/inbox/${v.username}` },
    ];
  }

  it.each(['cross-site', 'same-site', 'Cross-Site', 'something-new'])(
    'Sec-Fetch-Site: %s → 403 cross_site_request on every state-changing route; nothing stored, no cookie set',
    async (site) => {
      const { app, count, victim } = guardedApp();
      const v = await victim();
      const before = { sessions: count('sessions'), inboxes: count('inboxes'), messages: count('messages') };
      for (const forged of forgeries(v)) {
        for (const cookie of [v.cookie, undefined]) {
          const answer = await app.http.inject({
            ...forged,
            headers: { 'sec-fetch-site': site, ...(cookie === undefined ? {} : { cookie }) },
          });
          expect(answer.statusCode, `${forged.name} with ${site}`).toBe(403);
          if (forged.method !== 'HEAD') {
            expect(answer.json()).toMatchObject({ success: false, error: { code: 'cross_site_request' } });
          }
          expect(answer.headers['set-cookie'], forged.name).toBeUndefined();
          expect(answer.headers['cache-control']).toBe('no-store');
        }
      }
      expect({ sessions: count('sessions'), inboxes: count('inboxes'), messages: count('messages') }).toEqual(before);
      const overview = await app.http.inject({ method: 'GET', url: '/api/session', headers: { cookie: v.cookie } });
      expect(overview.json<{ inboxes: Array<{ username: string; count: number }> }>().inboxes).toEqual([
        expect.objectContaining({ username: v.username, count: 1 }),
      ]);
    },
  );

  it.each([
    ['same-origin', 'navigate'],
    ['none', 'navigate'],
    [undefined, 'navigate'],
    ['same-origin', 'Navigate'],
    ['same-origin', 'nested-navigate'],
    ['same-origin', 'no-cors'],
    ['same-origin', 'websocket'],
    ['same-origin', 'something-new'],
  ])(
    'Sec-Fetch-Site: %s with Sec-Fetch-Mode: %s (a link, a form, a typed URL, an image) → 403 on every state-changing route; nothing stored',
    async (site, mode) => {
      const { app, count, rows, victim } = guardedApp();
      const v = await victim();
      const before = { sessions: count('sessions'), inboxes: count('inboxes'), messages: count('messages') };
      for (const forged of forgeries(v)) {
        for (const cookie of [v.cookie, undefined]) {
          const headers = { 'sec-fetch-mode': mode, ...(site === undefined ? {} : { 'sec-fetch-site': site }), ...(cookie === undefined ? {} : { cookie }) };
          const answer = await app.http.inject({ ...forged, headers });
          expect(answer.statusCode, `${forged.name} with ${site}/${mode}`).toBe(403);
          if (forged.method !== 'HEAD') {
            expect(answer.json()).toMatchObject({ success: false, error: { code: 'cross_site_request', message: expect.stringContaining('link') } });
          }
          expect(answer.headers['set-cookie'], forged.name).toBeUndefined();
        }
      }
      expect({ sessions: count('sessions'), inboxes: count('inboxes'), messages: count('messages') }).toEqual(before);
      expect(rows("SELECT username FROM inboxes WHERE username LIKE 'victim%'")).toEqual([]);
    },
  );

  it('leaves reads alone when navigated to: a link to a message, its .eml or the OpenAPI document works', async () => {
    const { app, victim } = guardedApp();
    const v = await victim();
    const headers = { cookie: v.cookie, 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'navigate' };
    expect((await app.http.inject({ method: 'GET', url: `/api/messages/${v.messageId}/raw`, headers })).statusCode).toBe(200);
    expect((await app.http.inject({ method: 'GET', url: '/api/openapi.json', headers })).statusCode).toBe(200);
    expect((await app.http.inject({ method: 'GET', url: '/api/session', headers })).statusCode).toBe(200);
  });

  it.each([
    ['same-origin', undefined],
    ['none', undefined],
    [undefined, undefined],
    ['same-origin', 'cors'],
    ['same-origin', 'same-origin'],
    [undefined, 'cors'],
  ])('Sec-Fetch-Site: %s, Sec-Fetch-Mode: %s (the web app\'s fetch, curl) → every state-changing route works as before', async (site, mode) => {
    const { app, victim } = guardedApp();
    const v = await victim();
    const headers = { cookie: v.cookie, ...(site === undefined ? {} : { 'sec-fetch-site': site }), ...(mode === undefined ? {} : { 'sec-fetch-mode': mode }) };
    const name = `name${Math.random().toString(36).slice(2, 10)}`;
    const create = await app.http.inject({ method: 'GET', url: `/api/create?username=${name}`, headers });
    expect(create.statusCode).toBe(200);
    expect(create.json()).toMatchObject({ username: name });
    expect((await app.http.inject({ method: 'HEAD', url: `/api/create?username=${name}`, headers })).statusCode).toBe(200);
    const redeem = await app.http.inject({ method: 'POST', url: '/api/premium/redeem', headers, payload: { key: v.key } });
    expect(redeem.statusCode).toBe(200);
    expect((await app.http.inject({ method: 'DELETE', url: `/api/messages/${v.messageId}`, headers })).json()).toEqual({ success: true });
    expect((await app.http.inject({ method: 'DELETE', url: `/api/inbox/${v.username}`, headers })).json()).toEqual({ success: true });
    // A cookie-less create (curl's first call) still makes a session.
    const { cookie: _cookie, ...uncookied } = headers;
    const fresh = await app.http.inject({ method: 'GET', url: '/api/create', headers: uncookied });
    expect(fresh.statusCode).toBe(200);
    expect(cookieOf(fresh.headers['set-cookie'])).toMatch(/^tempinbox_session=[A-Za-z0-9_-]{43}$/);
  });

  it('leaves reads alone: a cross-site read is answered as usual (the Strict cookie is not sent with it anyway)', async () => {
    const { app, victim } = guardedApp();
    const v = await victim();
    const headers = { cookie: v.cookie, 'sec-fetch-site': 'cross-site' };
    expect((await app.http.inject({ method: 'GET', url: '/api/domains', headers })).statusCode).toBe(200);
    expect((await app.http.inject({ method: 'GET', url: '/api/session', headers })).statusCode).toBe(200);
    expect((await app.http.inject({ method: 'GET', url: `/api/check/${v.username}`, headers })).statusCode).toBe(200);
    expect((await app.http.inject({ method: 'GET', url: `/api/messages/${v.messageId}`, headers })).statusCode).toBe(200);
  });

  it('sets the session cookie SameSite=Strict', async () => {
    const { app } = guardedApp();
    const created = await app.http.inject({ method: 'GET', url: '/api/create' });
    const line = String(created.headers['set-cookie']);
    expect(line).toContain('SameSite=Strict');
    expect(line).not.toContain('SameSite=Lax');
  });
});

describe('the route table', () => {
  it('guards every route with a method other than GET/HEAD/OPTIONS, and GET /api/create, and nothing else', async () => {
    const app = Fastify();
    const routes: RouteOptions[] = [];
    // Registered before the table's own hook, so each options object is seen and then guarded in place.
    app.addHook('onRoute', (route) => {
      routes.push(route);
    });
    registerRoutes(app, {} as HttpDeps);
    const guarded = (route: RouteOptions): boolean =>
      [route.onRequest ?? []].flat().some((hook) => hook === rejectCrossSite);
    const unsafe = routes.filter((route) => ![route.method].flat().every((m) => ['GET', 'HEAD', 'OPTIONS'].includes(m)));
    expect(unsafe.map((route) => `${String(route.method)} ${route.url}`).sort()).toEqual([
      'DELETE /api/inbox/:username',
      'DELETE /api/inbox/:username/webhook',
      'DELETE /api/messages/:id',
      'POST /api/inbox/:username/webhook/test',
      'POST /api/premium/redeem',
      'PUT /api/inbox/:username/webhook',
    ]);
    for (const route of unsafe) expect(guarded(route), `${String(route.method)} ${route.url}`).toBe(true);
    const guardedSafe = routes.filter((route) => !unsafe.includes(route) && guarded(route));
    expect(guardedSafe.map((route) => `${String(route.method)} ${route.url}`).sort()).toEqual(['GET /api/create', 'HEAD /api/create']);
    await app.close();
  });
});
