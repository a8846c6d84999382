import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolAvailable } from '../helpers/external-tools.js';
import { startServer, tempDataDir, type ServerProcess } from '../helpers/server-process.js';
import { launchBrowser, screenshot } from './browser-helpers.js';

/** A free inbox lifetime short enough to watch it end. */
const TTL_SECONDS = 6;
/** Cookie-less creates that certainly spend the per-address budget (30 per 10 min, src/domain/fair-use.ts). */
const MAX_CREATES = 40;

const hasChromium = toolAvailable('chromium', 'web app: expiry and rate limits');

/** Expiry and fair-use limits as the reader meets them, with the real limits on. */
describe.skipIf(!hasChromium)('web app: expiry and rate limits', { timeout: 60_000 }, () => {
  let server: ServerProcess;
  let browser: Browser;
  const data = tempDataDir();

  beforeAll(async () => {
    [server, browser] = await Promise.all([
      startServer({ DATABASE_URL: data.databaseUrl, RATE_LIMITS: 'on', FREE_TTL_SECONDS: String(TTL_SECONDS) }),
      launchBrowser(),
    ]);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    expect(await server?.stop()).toBe(0);
    data.cleanup();
  });

  it('turns the countdown into an expired state with a way to a new address, and shows rate limits as sentences', async () => {
    const context = await browser.newContext({ viewport: { width: 1000, height: 800 }, reducedMotion: 'reduce' });
    const page = await context.newPage();
    await page.goto(server.baseUrl);
    await page.getByTestId('address').waitFor();
    const first = (await page.getByTestId('address').textContent()) ?? '';
    expect(await page.getByTestId('countdown').textContent()).toMatch(/^00:0[0-6]$/);

    await page.getByRole('heading', { name: 'This address has expired' }).waitFor({ timeout: (TTL_SECONDS + 5) * 1000 });
    expect(await page.getByRole('alert').textContent()).toContain('no longer receives mail');
    expect(await page.getByRole('button', { name: 'Copy' }).isDisabled()).toBe(true);
    expect(await page.getByTestId('empty-inbox').count()).toBe(0);
    // The server agrees: the inbox answers 410 to its owner.
    expect((await page.request.get(`${server.baseUrl}/api/check/${first.split('@')[0]}`)).status()).toBe(410);
    await screenshot(page, 'expired');

    await page.getByRole('button', { name: 'New address' }).click();
    await expect.poll(() => page.getByTestId('address').textContent()).not.toBe(first);
    await page.getByTestId('countdown').waitFor();
    expect(await page.getByRole('heading', { name: 'Your temporary address' }).count()).toBe(1);

    // Spend this address's creation budget from outside the page (the same client address).
    let status = 0;
    for (let i = 0; i < MAX_CREATES && status !== 429; i += 1) {
      status = (await fetch(`${server.baseUrl}/api/create`, { signal: AbortSignal.timeout(5000) })).status;
    }
    expect(status).toBe(429);

    // In the open page: "New address" now meets the limit, said in words, with the time to wait.
    await page.getByRole('button', { name: 'New address' }).click();
    const notice = page.getByTestId('notice');
    await notice.waitFor();
    expect(await notice.locator('p').textContent()).toMatch(/^Too many requests from your connection\. Please wait \d+ minutes? and try again\.$/);
    await page.getByTestId('failed').waitFor();

    // A first visit while limited: the same sentence, never raw JSON, and a way to retry.
    const fresh = await browser.newContext({ viewport: { width: 1000, height: 800 }, reducedMotion: 'reduce' });
    const freshPage = await fresh.newPage();
    await freshPage.goto(server.baseUrl);
    await freshPage.getByTestId('failed').waitFor();
    expect(await freshPage.getByTestId('notice').locator('p').textContent()).toMatch(/^Too many requests from your connection\. Please wait \d+ minutes? and try again\.$/);
    expect(await freshPage.getByRole('button', { name: 'Try again now' }).isVisible()).toBe(true);
    expect(await freshPage.locator('body').textContent()).not.toMatch(/[{}]|rate_limited|429/);
    await screenshot(freshPage, 'rate-limited');
    await fresh.close();
    await context.close();
  });
});
