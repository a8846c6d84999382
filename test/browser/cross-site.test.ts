import Database from 'better-sqlite3';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolAvailable } from '../helpers/external-tools.js';
import { runBin, startServer, tempDataDir, type ServerProcess } from '../helpers/server-process.js';
import { launchBrowser, pause } from './browser-helpers.js';

/**
 * Cross-site request forgery in a real Chromium (docs/api.md "Session cookie" and "Cross-site
 * requests"): a victim with a Premium session at http://127.0.0.1:<port> visits a page served
 * from another loopback origin (127.0.0.2, another site) that tries every way a page can
 * reach the API: image, link, form, scripted navigation, fetch. None of them may create or
 * delete anything in the victim's license, and no forged call may make a session (whose
 * Set-Cookie a top-level navigation would accept, replacing the victim's cookie); the web app
 * itself keeps working.
 */

/** A second loopback address: another host, so another site, for the browser. */
const ATTACKER_HOST = '127.0.0.2';
/** Time for requests a page fires on load (images, fetches) to reach the server: proves an absence. */
const SETTLE_MS = 1500;

/** The attacker's site: one page per route, built by `pages`. */
interface AttackerSite {
  base: string;
  close: () => Promise<void>;
}

async function startAttackerSite(pages: Record<string, string>): Promise<AttackerSite> {
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const body = pages[request.url ?? '/'];
    response.writeHead(body === undefined ? 404 : 200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    response.end(body ?? 'no such page');
  });
  await new Promise<void>((done) => server.listen(0, ATTACKER_HOST, done));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    base: `http://${ATTACKER_HOST}:${port}`,
    close: () => new Promise<void>((done) => {
      server.closeAllConnections();
      server.close(() => done());
    }),
  };
}

const hasChromium = toolAvailable('chromium', 'cross-site requests against a Premium victim in Chromium');

describe.skipIf(!hasChromium)('cross-site requests against a Premium victim in Chromium', { timeout: 90_000 }, () => {
  let server: ServerProcess;
  let browser: Browser;
  let db: Database.Database;
  const data = tempDataDir();
  const env = { DATABASE_URL: data.databaseUrl };

  beforeAll(async () => {
    [server, browser] = await Promise.all([startServer({ ...env, RATE_LIMITS: 'off' }), launchBrowser()]);
    db = new Database(join(data.dir, 'tempinbox.db'), { readonly: true, fileMustExist: true });
  }, 60_000);
  afterAll(async () => {
    db?.close();
    await browser?.close();
    expect(await server?.stop()).toBe(0);
    data.cleanup();
  });

  async function mintKey(): Promise<string> {
    const result = await runBin(['license', 'create'], env);
    expect(result.code).toBe(0);
    return result.stdout.trim();
  }

  /** The victim's own view, asked by the web app's origin (same-origin, carries the Strict cookie). */
  async function victimSession(page: Page): Promise<{ premium: boolean; premium_until: string; inboxes: Array<{ username: string }> }> {
    return (await page.evaluate("fetch('/api/session').then((response) => response.json())")) as Awaited<ReturnType<typeof victimSession>>;
  }

  const rows = (sql: string): unknown[] => db.prepare(sql).all();
  const count = (table: string): number => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

  it('creates, redeems and deletes nothing for the attacker, while the web app keeps working', async () => {
    const [victimKey, attackerKey] = await Promise.all([mintKey(), mintKey()]);
    const context: BrowserContext = await browser.newContext();
    const app = await context.newPage();
    await app.goto(server.baseUrl);
    await app.getByTestId('address').waitFor();
    const victimAddress = (await app.getByTestId('address').textContent()) ?? '';
    const victimUsername = victimAddress.split('@')[0] ?? '';
    await app.getByText('Premium: keep inboxes 30 days').click();
    await app.getByLabel('License key').fill(victimKey);
    await app.getByRole('button', { name: 'Activate' }).click();
    await app.getByTestId('premium-badge').waitFor();
    const before = await victimSession(app);
    expect(before.premium).toBe(true);
    expect(before.inboxes.map((inbox) => inbox.username)).toEqual([victimUsername]);
    const stored = { sessions: count('sessions'), inboxes: count('inboxes') };

    const target = `${server.baseUrl}/api/create`;
    const site = await startAttackerSite({
      '/img': `<!doctype html><title>img</title><img src="${target}?username=victimimg">`,
      '/link': `<!doctype html><title>link</title><a id="go" href="${target}?username=victimlink">win a prize</a>`,
      '/form': `<!doctype html><title>form</title><form method="GET" action="${target}"><input name="username" value="victimform"><button id="go">go</button></form>`,
      '/post-form': `<!doctype html><title>post</title><form method="POST" enctype="text/plain" action="${server.baseUrl}/api/premium/redeem"><input name='{"key":"${attackerKey}","x":"' value='"}'><button id="go">go</button></form>`,
      '/nav': `<!doctype html><title>nav</title><script>location.href = ${JSON.stringify(`${target}?username=victimnav`)};</script>`,
      '/fetch': `<!doctype html><title>fetch</title><script>
        const base = ${JSON.stringify(server.baseUrl)};
        const tries = [
          fetch(base + '/api/create?username=victimfetch', { mode: 'no-cors', credentials: 'include' }),
          fetch(base + '/api/premium/redeem', { method: 'POST', mode: 'no-cors', credentials: 'include',
            headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ key: ${JSON.stringify(attackerKey)} }) }),
          fetch(base + '/api/premium/redeem', { method: 'POST', credentials: 'include',
            headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key: ${JSON.stringify(attackerKey)} }) }),
          fetch(base + '/api/inbox/${victimUsername}', { method: 'DELETE', credentials: 'include' }),
        ];
        Promise.allSettled(tries).then((results) => { document.title = 'done:' + results.map((r) => r.status).join(','); });
      </script>`,
      '/back': `<!doctype html><title>back</title><a id="go" href="${server.baseUrl}/">open tempinbox</a>`,
    });
    try {
      const attacker = await context.newPage();
      await attacker.goto(`${site.base}/img`);
      await attacker.goto(`${site.base}/fetch`);
      await attacker.waitForFunction("document.title.startsWith('done:')");
      for (const path of ['/link', '/form', '/post-form']) {
        await attacker.goto(`${site.base}${path}`);
        await Promise.all([attacker.waitForURL((url) => url.origin === server.baseUrl), attacker.click('#go')]);
        expect(await attacker.textContent('body'), path).toContain('"code":"cross_site_request"');
      }
      await Promise.all([attacker.waitForURL((url) => url.origin === server.baseUrl), attacker.goto(`${site.base}/nav`, { waitUntil: 'commit' })]);
      await attacker.waitForLoadState();
      expect(await attacker.textContent('body'), '/nav').toContain('"code":"cross_site_request"');
      await pause(SETTLE_MS);

      // The victim's license: the same one inbox, the same license, nothing deleted.
      const after = await victimSession(app);
      expect(after.premium).toBe(true);
      expect(after.premium_until).toBe(before.premium_until);
      expect(after.inboxes.map((inbox) => inbox.username)).toEqual([victimUsername]);
      // The store: no attacker-chosen name anywhere, no inbox and no session made by the forgeries.
      expect(rows("SELECT username FROM inboxes WHERE username LIKE 'victim%'")).toEqual([]);
      expect({ sessions: count('sessions'), inboxes: count('inboxes') }).toEqual(stored);

      // A link from the attacker's page to the web app: the app loads signed in and works.
      await attacker.goto(`${site.base}/back`);
      await Promise.all([attacker.waitForURL(`${server.baseUrl}/`), attacker.click('#go')]);
      await attacker.getByTestId('premium-badge').waitFor();
      expect(await attacker.getByTestId('address').textContent()).toBe(victimAddress);
      await attacker.getByLabel('Custom address').fill('my-own-name');
      await attacker.getByRole('button', { name: 'Create' }).click();
      await expect.poll(() => attacker.getByTestId('address').textContent()).toBe('my-own-name@tempinbox.test');
      const mine = await victimSession(app);
      expect(mine.inboxes.map((inbox) => inbox.username).sort()).toEqual(['my-own-name', victimUsername].sort());
    } finally {
      await site.close();
      await context.close();
    }
  });
});
