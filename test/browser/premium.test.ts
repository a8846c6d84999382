import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieClient } from '../helpers/cookie-client.js';
import { toolAvailable } from '../helpers/external-tools.js';
import { sendWithNodemailer } from '../helpers/send-mail.js';
import { runBin, startServer, tempDataDir, type ServerProcess } from '../helpers/server-process.js';
import { launchBrowser, pause, screenshot } from './browser-helpers.js';

/** New mail must show within this time without a reload (the page polls every 3 s). */
const ARRIVAL_MS = 10_000;
/** Time for a late, duplicate answer to show before its absence counts. */
const SETTLE_MS = 1500;

const hasChromium = toolAvailable('chromium', 'web app: Premium');

/** Premium in the browser: redeeming through the field (every outcome in words), custom names, switching. */
describe.skipIf(!hasChromium)('web app: Premium', { timeout: 60_000 }, () => {
  let server: ServerProcess;
  let browser: Browser;
  const data = tempDataDir();
  const env = { DATABASE_URL: data.databaseUrl };

  beforeAll(async () => {
    [server, browser] = await Promise.all([
      startServer({ ...env, RATE_LIMITS: 'off', DOMAINS: 'tempinbox.test,alt.test' }),
      launchBrowser(),
    ]);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    expect(await server?.stop()).toBe(0);
    data.cleanup();
  });

  async function mintKey(...args: string[]): Promise<string> {
    const result = await runBin(['license', 'create', ...args], env);
    expect(result.code).toBe(0);
    return result.stdout.trim();
  }

  async function redeemThroughField(page: Page, key: string): Promise<void> {
    await page.getByLabel('License key').fill(key);
    await page.getByRole('button', { name: 'Activate' }).click();
  }

  /** The sentence shown for the last failed redeem or create, and proof it is not raw JSON. */
  async function alertText(page: Page): Promise<string> {
    const alert = page.getByRole('alert');
    await alert.waitFor();
    const text = (await alert.textContent()) ?? '';
    expect(text).not.toMatch(/[{}]|"code"|license_|username_/);
    return text;
  }

  it('tells every redeem outcome in plain words, then gives custom names on a chosen domain and a switcher', async () => {
    const key = await mintKey();
    const singleSeat = await mintKey('--max-sessions', '1');
    const otherDevice = new CookieClient(server.baseUrl);
    expect((await otherDevice.postJson('/api/premium/redeem', { key: singleSeat })).status).toBe(200);

    const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, reducedMotion: 'reduce' });
    const page = await context.newPage();
    await page.goto(server.baseUrl);
    await page.getByTestId('address').waitFor();
    const firstAddress = (await page.getByTestId('address').textContent()) ?? '';
    await page.getByText('Premium: keep inboxes 30 days').click();

    await page.getByRole('button', { name: 'Activate' }).click();
    expect(await alertText(page)).toBe('Enter your license key first.');
    await redeemThroughField(page, 'TI-AAAAAAAA-AAAAAAAA-AAAAAAAA-AAAAAAAA');
    await expect.poll(() => alertText(page)).toContain('That license key is not valid.');
    await redeemThroughField(page, singleSeat);
    await expect.poll(() => alertText(page)).toBe('That license key is already in use on its maximum number of devices.');

    // Outcomes no CLI key can produce on demand, answered in the contract's shape.
    const answer = (status: number, code: string, headers: Record<string, string> = {}) => ({
      status,
      headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
      body: JSON.stringify({ success: false, error: { code, message: 'server wording' } }),
    });
    await page.route('**/api/premium/redeem', (route) => route.fulfill(answer(410, 'license_expired')));
    await redeemThroughField(page, key);
    await expect.poll(() => alertText(page)).toBe('That license key has expired.');
    await page.unroute('**/api/premium/redeem');
    await page.route('**/api/premium/redeem', (route) => route.fulfill(answer(429, 'rate_limited', { 'retry-after': '120' })));
    await redeemThroughField(page, key);
    await expect.poll(() => alertText(page)).toBe('Too many requests from your connection. Please wait 2 minutes and try again.');
    await page.unroute('**/api/premium/redeem');
    expect(await page.getByTestId('premium-badge').count()).toBe(0);

    await redeemThroughField(page, `  ${key.toLowerCase()} `);
    await page.getByTestId('premium-badge').waitFor();
    const facts = page.getByTestId('premium-facts');
    await expect.poll(() => facts.textContent()).toContain('Inboxes are kept 30 days. 1 of 10 inboxes in use.');
    expect(await page.getByTestId('address').textContent()).toBe(firstAddress); // adopted, not replaced
    await expect.poll(() => page.getByTestId('countdown').textContent()).toMatch(/^(29|30) days$/);

    // A custom name on the second domain.
    await page.getByLabel('Custom address').fill('my-project');
    await page.getByLabel('Domain').selectOption('alt.test');
    await page.getByRole('button', { name: 'Create' }).click();
    await expect.poll(() => page.getByTestId('address').textContent()).toBe('my-project@alt.test');
    await expect.poll(() => facts.textContent()).toContain('2 of 10 inboxes in use.');
    expect(await page.getByTestId('switcher-item').count()).toBe(2);

    await page.getByLabel('Custom address').fill('postmaster');
    await page.getByRole('button', { name: 'Create' }).click();
    await expect.poll(() => alertText(page)).toBe('That name is taken. Try another one.');
    await page.getByLabel('Custom address').fill('a');
    await page.getByRole('button', { name: 'Create' }).click();
    await expect.poll(() => alertText(page)).toContain('That name cannot be used');

    // Switch: each inbox shows its own mail.
    await sendWithNodemailer(server.smtpPort, { to: firstAddress, subject: 'For the first inbox', text: 'one' });
    await sendWithNodemailer(server.smtpPort, { to: 'my-project@alt.test', subject: 'For my-project', text: 'two' });
    await page.getByTestId('message-item').filter({ hasText: 'For my-project' }).waitFor({ timeout: ARRIVAL_MS });
    expect(await page.getByTestId('message-item').filter({ hasText: 'For the first inbox' }).count()).toBe(0);
    await page.getByTestId('switcher-item').filter({ hasText: firstAddress }).click();
    await expect.poll(() => page.getByTestId('address').textContent()).toBe(firstAddress);
    await page.getByTestId('message-item').filter({ hasText: 'For the first inbox' }).waitFor({ timeout: ARRIVAL_MS });
    expect(await page.getByTestId('message-item').filter({ hasText: 'For my-project' }).count()).toBe(0);
    expect(await page.getByTestId('switcher-item').filter({ hasText: firstAddress }).getAttribute('aria-current')).toBe('true');

    // Back and forth: each inbox still counts its one message (the count is the server's, not
    // added to again on every switch).
    const countOf = (address: string) => page.getByTestId('switcher-item').filter({ hasText: address }).locator('.switcher__count').textContent();
    for (const address of ['my-project@alt.test', firstAddress, 'my-project@alt.test', firstAddress]) {
      await page.getByTestId('switcher-item').filter({ hasText: address }).click();
      await expect.poll(() => page.getByTestId('address').textContent()).toBe(address);
      await page.getByTestId('message-item').first().waitFor({ timeout: ARRIVAL_MS });
      await expect.poll(() => page.locator('.inbox__count').textContent()).toMatch(/^1 message/);
    }
    await pause(SETTLE_MS); // a late answer counted twice would show now
    expect(await countOf(firstAddress)).toBe('1 message');
    expect(await countOf('my-project@alt.test')).toBe('1 message');
    await page.getByTestId('message-item').first().click();
    await screenshot(page, 'premium');

    // A return visit restores premium, both inboxes, and the one last shown.
    await page.reload();
    await page.getByTestId('premium-badge').waitFor();
    await expect.poll(() => page.getByTestId('switcher-item').count()).toBe(2);
    expect(await page.getByTestId('address').textContent()).toBe(firstAddress);

    // A second browser redeeming the same key sees the same inboxes (they belong to the license).
    const second = await browser.newContext();
    const secondPage = await second.newPage();
    await secondPage.goto(server.baseUrl);
    await secondPage.getByTestId('address').waitFor();
    await secondPage.getByText('Premium: keep inboxes 30 days').click();
    await redeemThroughField(secondPage, key);
    await secondPage.getByTestId('premium-badge').waitFor();
    await expect.poll(() => secondPage.getByTestId('switcher-item').count()).toBe(3);
    expect(await secondPage.getByTestId('switcher-item').filter({ hasText: 'my-project@alt.test' }).count()).toBe(1);
    await second.close();
    await context.close();
  });
});
