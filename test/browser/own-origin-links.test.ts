import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendWithNodemailer } from '../helpers/send-mail.js';
import { runBin, startServer, tempDataDir, type ServerProcess } from '../helpers/server-process.js';
import { launchBrowser, pause, screenshot } from './browser-helpers.js';

/** New mail must show within this time without a reload (polling every 3 s on a loaded machine). */
const ARRIVAL_MS = 10_000;
/** Time for a navigation the page might have started to reach the server: proves an absence. */
const SETTLE_MS = 1500;
/** The routes the server guards (docs/api.md "Cross-site requests"): create, redeem, every DELETE target. */
const STATE_CHANGING = /^\/api\/(?:create|premium\/redeem|inbox\/[^/]+|messages\/[^/]+)$/;

/**
 * Mail cannot drive the app's own API (docs/api.md "Cross-site requests", docs/web.md "Reading"):
 * a Premium reader gets a mail whose links point at `<origin>/api/create?username=…`. The links
 * list shows such a link as text, not as a link; the mail's HTML loses it; and whatever way the
 * browser still navigates there (a same-origin link click, a typed URL, a link in a new tab),
 * the answer is `403 cross_site_request` and no inbox is made. The page's own requests work.
 */
describe('links into the app\'s own origin in a mail', { timeout: 90_000 }, () => {
  let server: ServerProcess;
  let browser: Browser;
  const data = tempDataDir();
  const env = { DATABASE_URL: data.databaseUrl };

  beforeAll(async () => {
    [server, browser] = await Promise.all([startServer({ ...env, RATE_LIMITS: 'off', MAIL_AUTH: 'off' }), launchBrowser()]);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    expect(await server?.stop()).toBe(0);
    data.cleanup();
  });

  /** The reader's own view, as the page's fetch() asks it. */
  async function inboxNames(page: Page): Promise<string[]> {
    const session = (await page.evaluate("fetch('/api/session').then((response) => response.json())")) as { inboxes: Array<{ username: string }> };
    return session.inboxes.map((inbox) => inbox.username).sort();
  }

  it('lists them as text, drops them from the HTML, and any navigation to them creates nothing', async () => {
    const key = (await runBin(['license', 'create'], env)).stdout.trim();
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, reducedMotion: 'reduce' });
    const page = await context.newPage();
    // Every request of the web app to a state-changing route, with the Fetch Metadata the server judges.
    const own: Array<Promise<[string, string, string | undefined]>> = [];
    page.on('request', (request) => {
      if (!STATE_CHANGING.test(new URL(request.url()).pathname) || request.frame() !== page.mainFrame()) return;
      own.push(request.allHeaders().then((headers) => [`${request.method()} ${new URL(request.url()).pathname}`, request.resourceType(), headers['sec-fetch-mode']]));
    });
    await page.goto(server.baseUrl);
    await page.getByTestId('address').waitFor();
    const address = (await page.getByTestId('address').textContent()) ?? '';
    await page.getByText('Premium: keep inboxes 30 days').click();
    await page.getByLabel('License key').fill(key);
    await page.getByRole('button', { name: 'Activate' }).click();
    await page.getByTestId('premium-badge').waitFor();
    const before = await inboxNames(page);
    expect(before).toEqual([address.split('@')[0]]);

    const create = `${server.baseUrl}/api/create?username=frommail`;
    // A DELETE route: no link can call it, but a link into our own origin is never offered whatever it names.
    const discard = `${server.baseUrl}/api/inbox/${address.split('@')[0]}`;
    await sendWithNodemailer(server.smtpPort, {
      from: '"Support" <support@example.org>',
      to: address,
      subject: 'Claim your bonus inbox',
      text: `Claim it: ${create}\nHelp: https://example.org/help\n`,
      html: `<p><a href="${create}">Claim your bonus inbox</a></p><p><a href="${discard}">Discard</a></p><p><a href="https://example.org/help">Help</a></p>`,
    });
    await page.getByTestId('message-item').waitFor({ timeout: ARRIVAL_MS });
    await page.getByTestId('message-item').click();

    // The list: the outside link is a link; ours are text, saying why, and not clickable.
    const list = page.getByTestId('links');
    await list.waitFor();
    expect(await list.locator('a').evaluateAll((anchors) => anchors.map((a) => a.getAttribute('href')))).toEqual(['https://example.org/help']);
    const inert = list.getByTestId('own-origin-link');
    expect(await inert.count()).toBe(2);
    expect(await inert.first().textContent()).toContain(create);
    expect(await inert.first().evaluate((element) => element.closest('a') === null)).toBe(true);
    expect(await list.textContent()).toContain('not a link');
    // The mail's HTML: the link's words stay, its target is gone.
    const frame = page.frameLocator('[data-testid=mail-frame]');
    const claim = frame.getByText('Claim your bonus inbox');
    await claim.waitFor();
    expect(await claim.evaluate((element) => element.closest('a')?.getAttribute('href') ?? null)).toBeNull();
    expect(await frame.getByText('Help').evaluate((element) => element.closest('a')?.getAttribute('href') ?? null)).toBe('https://example.org/help');
    await screenshot(page, 'own-origin-links');
    await page.getByTestId('reader').screenshot({ path: '/tmp/i33-trust-own-origin-links.png' });

    // Clicking where the link would be opens nothing.
    const pages = context.pages().length;
    await inert.first().click();
    await claim.click();
    await pause(SETTLE_MS);
    expect(context.pages().length).toBe(pages);

    // The browser navigates there anyway: a link on the page's own origin, a typed URL, a new tab.
    const viaLink = await context.newPage();
    await viaLink.goto(`${server.baseUrl}/api/openapi.json`);
    await viaLink.setContent(`<a id="go" href="${create}">go</a>`);
    const clicked = await Promise.all([viaLink.waitForResponse((response) => response.url() === create), viaLink.click('#go')]).then(([response]) => response);
    expect(clicked.status()).toBe(403);
    expect(await clicked.json()).toMatchObject({ error: { code: 'cross_site_request' } });
    const typed = await viaLink.goto(create);
    expect(typed?.status()).toBe(403);
    await viaLink.goto(`${server.baseUrl}/api/openapi.json`);
    const scripted = await Promise.all([
      viaLink.waitForResponse((response) => response.url() === create),
      viaLink.evaluate(`setTimeout(() => { location.href = ${JSON.stringify(create)}; }, 0)`),
    ]).then(([response]) => response);
    expect(scripted.status()).toBe(403);
    await pause(SETTLE_MS);

    // Nothing was created; the page's own fetch() still creates and discards.
    expect(await inboxNames(page)).toEqual(before);
    await page.getByLabel('Custom address').fill('made-by-the-page');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await expect.poll(() => page.getByTestId('address').textContent()).toBe('made-by-the-page@tempinbox.test');
    expect(await inboxNames(page)).toEqual([...before, 'made-by-the-page'].sort());
    await page.getByRole('button', { name: 'Delete this inbox' }).click();
    await expect.poll(() => inboxNames(page)).toEqual(before);
    // The web app itself calls these routes only with fetch() (mode cors), never by navigating.
    const calls = await Promise.all(own);
    expect(calls.map(([call]) => call)).toEqual(expect.arrayContaining(['GET /api/create', 'POST /api/premium/redeem', `DELETE /api/inbox/made-by-the-page`]));
    for (const [call, type, mode] of calls) expect([call, type, mode]).toEqual([call, 'fetch', 'cors']);
    await context.close();
  });
});
