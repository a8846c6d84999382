import type { Browser, BrowserContext, Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolAvailable } from '../helpers/external-tools.js';
import { sendWithNodemailer } from '../helpers/send-mail.js';
import { startServer, tempDataDir, type ServerProcess } from '../helpers/server-process.js';
import { EVENTS_PATH, launchBrowser, screenshot, watchSideEffects } from './browser-helpers.js';

/** New mail must show within this time without a reload (polling every 3 s on a loaded machine). */
const ARRIVAL_MS = 10_000;
/** The event stream, whatever the inbox and query. */
const EVENTS = EVENTS_PATH;
/** Listings of any inbox. */
const CHECK = /\/api\/check\//;
/** One message's detail (not its .eml or attachments). */
const DETAIL = /\/api\/messages\/[^/?]+$/;

/** Fields of docs/api.md that a newer server adds to every message, as the page must show them. */
const EXTRA = {
  recipient: 'PLACEHOLDER',
  codes: ['482913', 'G-77A1'],
  links: [
    { url: 'https://example.com/confirm?token=abc', text: 'Confirm your address' },
    { url: 'javascript:alert(1)', text: 'never listed' },
    { url: 'https://example.com/help', text: '' },
  ],
  auth: {
    spf: { result: 'pass', domain: 'bounce.example.com' },
    dkim: [{ result: 'pass', domain: 'example.com', selector: 's1' }],
    dmarc: { result: 'pass', domain: 'example.com', policy: 'reject' },
    arc: { result: 'none' },
  },
};
/** The start of a long message, as a listing cut at its byte budget would send it. */
const CUT_BODY = 'The start of a long message';

/** Answers the stream like a server without one (404 in the API's error shape). */
function noStream(route: Route): Promise<void> {
  return route.fulfill({
    status: 404,
    contentType: 'application/json; charset=utf-8',
    body: JSON.stringify({ success: false, error: { code: 'not_found', message: 'Route not found.' } }),
  });
}

const hasChromium = toolAvailable('chromium', 'web app: message details and live fallback');

/**
 * The message fields of the live-mail and message-insight versions of the API (codes, links,
 * sender checks, recipient, truncated listings) rendered by the page, and its polling fallback
 * and session recovery; the fields are injected into real answers of the started program.
 */
describe.skipIf(!hasChromium)('web app: message details and live fallback', { timeout: 90_000 }, () => {
  let server: ServerProcess;
  let browser: Browser;
  const data = tempDataDir();

  beforeAll(async () => {
    [server, browser] = await Promise.all([
      startServer({ DATABASE_URL: data.databaseUrl, RATE_LIMITS: 'off' }),
      launchBrowser(),
    ]);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    expect(await server?.stop()).toBe(0);
    data.cleanup();
  });

  async function openApp(options: { width?: number; colorScheme?: 'light' | 'dark'; watch?: (page: Page) => void } = {}): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({
      viewport: { width: options.width ?? 1200, height: 900 },
      colorScheme: options.colorScheme ?? 'light',
      reducedMotion: 'reduce',
    });
    await context.route(EVENTS, noStream);
    const page = await context.newPage();
    options.watch?.(page);
    await page.goto(server.baseUrl);
    await page.getByTestId('address').waitFor();
    return { context, page };
  }

  /** Adds the newer fields to every message of a check listing (and cuts the one called "Long"). */
  async function injectFields(context: BrowserContext, recipient: string): Promise<string[]> {
    const details: string[] = [];
    await context.route(CHECK, async (route) => {
      const response = await route.fetch();
      const body = (await response.json()) as { emails: Array<Record<string, unknown>> };
      for (const email of body.emails) {
        Object.assign(email, { ...EXTRA, recipient });
        if (email.subject === 'Long') Object.assign(email, { body: CUT_BODY, html: null, truncated: true });
        else email.truncated = false;
      }
      await route.fulfill({ response, json: { ...body, has_more: false } });
    });
    await context.route(DETAIL, async (route) => {
      if (route.request().method() !== 'GET') return route.continue();
      details.push(route.request().url());
      const response = await route.fetch();
      await route.fulfill({ response, json: { ...(await response.json()), ...EXTRA, recipient } });
    });
    return details;
  }

  it('shows codes with one-click copy, safe links, the sender badge, the recipient, and loads a cut message whole', async () => {
    const { context, page } = await openApp();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.baseUrl });
    const effects = watchSideEffects(context, page);
    const address = (await page.getByTestId('address').textContent()) ?? '';
    const recipient = address.replace('@', '+signup@');
    const details = await injectFields(context, recipient);
    await sendWithNodemailer(server.smtpPort, {
      from: '"Example" <hello@example.com>',
      to: recipient,
      subject: 'Your sign-in code',
      text: 'Use 482913 to sign in.',
      html: '<p>Use <b>482913</b> to sign in.</p>',
    });

    // The list row offers the first code, copyable without opening the message.
    const row = page.locator('.message-row').filter({ hasText: 'Your sign-in code' });
    await row.waitFor({ timeout: ARRIVAL_MS });
    await row.getByTestId('code-chip').click();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe('482913');
    await expect.poll(() => page.getByTestId('announcer').textContent()).toBe('Copied code 482913');
    expect(await page.getByTestId('reader').count()).toBe(0); // copying did not open it

    await row.getByTestId('message-item').click();
    const code = page.getByTestId('code');
    expect(await code.textContent()).toContain('482913');
    expect(await code.getAttribute('aria-label')).toBe('Copy code 482913');
    await page.evaluate('navigator.clipboard.writeText("")');
    await code.click();
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe('482913');
    expect(await page.getByTestId('reader').getByTestId('code-chip').textContent()).toContain('G-77A1');

    // Links: only http(s), each opened safely; the URL is shown beside the words.
    const links = page.getByTestId('links').locator('a');
    expect(await links.count()).toBe(2);
    expect(await links.evaluateAll((anchors) => anchors.map((a) => [a.getAttribute('href'), a.getAttribute('target'), a.getAttribute('rel')]))).toEqual([
      ['https://example.com/confirm?token=abc', '_blank', 'noopener noreferrer'],
      ['https://example.com/help', '_blank', 'noopener noreferrer'],
    ]);
    expect(await page.getByTestId('links').textContent()).toContain('Confirm your address');
    expect(await page.getByTestId('links').textContent()).not.toContain('never listed');

    // The sender badge, and its explanation on demand (and as a tooltip).
    const badge = page.getByTestId('auth');
    expect(await badge.locator('summary').textContent()).toBe('Verified as example.com ✓');
    expect(await badge.locator('summary').getAttribute('title')).toContain('DMARC passed');
    expect(await badge.locator('li').first().isVisible()).toBe(false);
    await badge.locator('summary').click();
    expect(await badge.locator('li').first().textContent()).toBe('DMARC passed: SPF or DKIM confirms that it comes from example.com.');
    expect(await page.getByTestId('recipient').textContent()).toBe(recipient);
    expect(await page.title()).toBe('tempinbox: a disposable e-mail address');
    await page.frameLocator('[data-testid=mail-frame]').locator('b', { hasText: '482913' }).waitFor();
    await screenshot(page, 'message-codes');

    // A message the listing cut: the reader fetches the whole one.
    const whole = `${CUT_BODY} goes on here and ends with THE-END.`;
    await sendWithNodemailer(server.smtpPort, { to: address, subject: 'Long', text: whole });
    await page.getByTestId('message-item').filter({ hasText: 'Long' }).waitFor({ timeout: ARRIVAL_MS });
    await expect.poll(() => page.title()).toBe('(1) tempinbox');
    await page.getByTestId('message-item').filter({ hasText: 'Long' }).click();
    await expect.poll(() => page.getByTestId('plain-text').textContent()).toContain('THE-END');
    expect(details.filter((url) => !url.endsWith('/raw'))).toHaveLength(1);
    expect(await page.title()).toBe('tempinbox: a disposable e-mail address');
    expect(effects.pageErrors).toEqual([]);
    expect(effects.consoleErrors).toEqual([]);
    await context.close();
  });

  it('lays the message details out at 360 px in the dark scheme', async () => {
    const { context, page } = await openApp({ width: 360, colorScheme: 'dark' });
    const address = (await page.getByTestId('address').textContent()) ?? '';
    await injectFields(context, address);
    await sendWithNodemailer(server.smtpPort, { from: '"Example" <hello@example.com>', to: address, subject: 'Your verification code', text: 'Code: 482913' });
    await page.getByTestId('message-item').waitFor({ timeout: ARRIVAL_MS });
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
    await screenshot(page, 'mobile-dark-codes-list');
    await page.getByTestId('message-item').click();
    await page.getByTestId('code').waitFor();
    await page.getByTestId('auth').locator('summary').click();
    expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
    await screenshot(page, 'mobile-dark-codes-message');
    await context.close();
  });

  it('follows the event stream: a message, a reconnection, a deletion and expiry', async () => {
    // A scripted stream in the contract's wire format (docs/api.md), until the server has one.
    const streamCalls: string[] = [];
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, reducedMotion: 'reduce' });
    const page = await context.newPage();
    const address = 'stream-test@tempinbox.test';
    const pushed = {
      id: 'StreamOnlyMessage00001', from: '"Stream" <push@example.com>', to: address, subject: 'From the stream',
      body: 'Pushed, never listed by check.', html: null, date: new Date(Date.now() + 60_000).toISOString(), attachments: [],
      recipient: address, codes: ['731904'], links: [], auth: null, truncated: false,
    };
    const scripts = [
      // The first connection delivers one message, then ends: the browser reconnects by itself.
      `retry: 300\n\n: ping\n\nevent: message\nid: ${pushed.id}\ndata: ${JSON.stringify(pushed)}\n\n`,
      // The reconnection (with Last-Event-ID) brings its deletion.
      `retry: 300\n\nevent: deleted\ndata: ${JSON.stringify({ id: pushed.id })}\n\n`,
      // Then the inbox expires.
      'retry: 600000\n\nevent: expired\ndata: {}\n\n',
    ];
    const item = page.getByTestId('message-item').filter({ hasText: 'From the stream' });
    await context.route(EVENTS, async (route) => {
      streamCalls.push(route.request().url());
      const body = scripts[streamCalls.length - 1];
      if (body === undefined) return noStream(route);
      // Each step only once the page has shown the one before.
      if (streamCalls.length === 2) await item.waitFor();
      if (streamCalls.length === 3) await item.waitFor({ state: 'detached' });
      await route.fulfill({ status: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-store' }, body });
    });
    await page.goto(server.baseUrl);
    await page.getByTestId('address').waitFor();
    await item.waitFor({ timeout: ARRIVAL_MS });
    expect(await page.locator('.message-row').filter({ hasText: 'From the stream' }).getByTestId('code-chip').textContent()).toContain('731904');
    await page.getByRole('heading', { name: 'This address has expired' }).waitFor({ timeout: ARRIVAL_MS });
    expect(streamCalls).toHaveLength(3);
    const username = ((await page.getByTestId('address').textContent()) ?? '').split('@')[0];
    expect(streamCalls[0]).toContain(`/api/inbox/${username}/events`);
    // The reconnection is the browser's own, which sends `Last-Event-ID` (Chromium adds that
    // header below Playwright's interception, so it cannot be read here; a plain server sees it).
    expect(streamCalls[1]).toBe(streamCalls[0]);
    await page.unrouteAll({ behavior: 'ignoreErrors' });
    await context.close();
  });

  it('keeps polling, one check at a time, when the event stream answers 404, and gets a new address after the session is lost', async () => {
    const streamTries: string[] = [];
    const checks: string[] = [];
    let open = 0;
    let most = 0;
    const { context, page } = await openApp({
      watch: (page) => {
        page.on('request', (request) => {
          if (EVENTS.test(request.url())) streamTries.push(request.url());
          if (!CHECK.test(request.url())) return;
          checks.push(request.url());
          open += 1;
          most = Math.max(most, open);
        });
        const finished = (request: { url: () => string }) => {
          if (CHECK.test(request.url())) open -= 1;
        };
        page.on('requestfinished', finished);
        page.on('requestfailed', finished);
      },
    });

    const address = (await page.getByTestId('address').textContent()) ?? '';
    await sendWithNodemailer(server.smtpPort, { to: address, subject: 'By polling', text: 'The stream is missing.' });
    await page.getByTestId('message-item').filter({ hasText: 'By polling' }).waitFor({ timeout: ARRIVAL_MS });
    await sendWithNodemailer(server.smtpPort, { to: address, subject: 'Second by polling', text: 'Still here.' });
    await page.getByTestId('message-item').filter({ hasText: 'Second by polling' }).waitFor({ timeout: ARRIVAL_MS });
    await expect.poll(() => page.title()).toBe('(2) tempinbox');
    expect(streamTries.length).toBeGreaterThanOrEqual(1); // it tried the stream first
    expect(await page.locator('.inbox').getAttribute('data-live')).toBe('polling');
    expect(checks.some((url) => url.includes('?since='))).toBe(true);
    // Coming back to the tab asks at once, but never beside a check still running.
    for (let i = 0; i < 5; i += 1) await page.evaluate('document.dispatchEvent(new Event("visibilitychange"))');
    expect(most).toBe(1);

    // The cookie is gone (cleared, or the session expired): the next check gets 401.
    // Cleared again until it shows: an answer in flight may renew the cookie (renewed on use).
    const lost = page.getByTestId('session-lost');
    await expect.poll(async () => {
      await context.clearCookies();
      return lost.isVisible();
    }, { timeout: 2 * ARRIVAL_MS, interval: 500 }).toBe(true);
    expect(await lost.textContent()).toContain(address);
    await screenshot(page, 'session-lost');
    await lost.getByRole('button', { name: 'Get a new address' }).click();
    await expect.poll(() => page.getByTestId('address').textContent()).not.toBe(address);
    const fresh = (await page.getByTestId('address').textContent()) ?? '';
    expect(fresh).toMatch(/@tempinbox\.test$/);
    await sendWithNodemailer(server.smtpPort, { to: fresh, subject: 'After the new session', text: 'Working again.' });
    await page.getByTestId('message-item').filter({ hasText: 'After the new session' }).waitFor({ timeout: ARRIVAL_MS });
    expect(await page.getByTestId('message-item').count()).toBe(1);
    expect(most).toBe(1);
    await context.close();
  });
});
