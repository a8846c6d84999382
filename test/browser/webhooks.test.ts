import { resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyWebhookSignature } from '../../src/domain/webhook-signature.js';
import { toolAvailable } from '../helpers/external-tools.js';
import { sendWithNodemailer } from '../helpers/send-mail.js';
import { runBin, startServer, tempDataDir, type ServerProcess } from '../helpers/server-process.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { launchBrowser, pause, screenshot, SCREENSHOT_DIR } from './browser-helpers.js';

/**
 * A delivery reaches the receiver and is listed within this time: the first attempt starts
 * within 1 s of the 250, and the page looks again every second after a new message or a test.
 */
const DELIVERY_MS = 15_000;
/** Time for a delivery that must not happen to show: the first attempt starts within 1 s. */
const SETTLE_MS = 2000;
const SECRET = 'browser-test-secret-0001';

const hasChromium = toolAvailable('chromium', 'web app: webhooks');

/** The Premium panel's webhook, in the browser, against the real server and a receiver on loopback. */
describe.skipIf(!hasChromium)('web app: webhooks', { timeout: 90_000 }, () => {
  let server: ServerProcess;
  let browser: Browser;
  let receiver: WebhookReceiver;
  const data = tempDataDir();
  const env = { DATABASE_URL: data.databaseUrl };

  beforeAll(async () => {
    [server, browser, receiver] = await Promise.all([
      // Loopback is not public: the receiver is reachable only through this opening.
      startServer({ ...env, RATE_LIMITS: 'off', WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' }),
      launchBrowser(),
      startWebhookReceiver(),
    ]);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    expect(await server?.stop()).toBe(0);
    data.cleanup();
  });

  async function premiumPage(): Promise<{ page: Page; address: string }> {
    const minted = await runBin(['license', 'create'], env);
    expect(minted.code).toBe(0);
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, reducedMotion: 'reduce' });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.baseUrl });
    const page = await context.newPage();
    await page.goto(server.baseUrl);
    await page.getByTestId('address').waitFor();
    await page.getByText('Premium: keep inboxes 30 days').click();
    await page.getByLabel('License key').fill(minted.stdout.trim());
    await page.getByRole('button', { name: 'Activate' }).click();
    await page.getByTestId('premium-badge').waitFor();
    await page.getByText('Webhook:').click();
    return { page, address: (await page.getByTestId('address').textContent()) ?? '' };
  }

  /** The sentence shown for the last refusal, and proof it is not the API's JSON or code. */
  async function alertText(page: Page): Promise<string> {
    const alert = page.getByTestId('webhook').getByRole('alert');
    await alert.waitFor();
    const text = (await alert.textContent()) ?? '';
    expect(text).not.toMatch(/[{}]|"code"|webhook_|premium_|invalid_/);
    return text;
  }

  async function save(page: Page, url: string, secret = ''): Promise<void> {
    await page.getByLabel('Webhook URL').fill(url);
    await page.getByLabel('Secret (optional)').fill(secret);
    await page.getByRole('button', { name: /^(Save|Replace) webhook$/ }).click();
  }

  const rows = (page: Page) => page.getByTestId('webhook-delivery');

  it('sets a webhook, lists the delivery of a mail and of a test, and removes it', async () => {
    const { page, address } = await premiumPage();
    const hookUrl = `http://127.0.0.1:${receiver.port}/hooks/tempinbox`;
    await save(page, hookUrl, SECRET);

    // The secret is shown once, copyable.
    const shown = page.getByTestId('webhook-secret');
    await shown.waitFor();
    expect(await shown.locator('code').textContent()).toBe(SECRET);
    await shown.getByRole('button', { name: 'Copy secret' }).click();
    await expect.poll(() => shown.getByRole('button', { name: 'Copied' }).count()).toBe(1);
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(SECRET);
    expect(await page.getByTestId('webhook-url').textContent()).toBe(`Sending to ${hookUrl}`);
    await page.getByTestId('webhook-no-deliveries').waitFor();

    // A mail over SMTP: posted, signed with the secret, and listed without a reload.
    await sendWithNodemailer(server.smtpPort, { to: address, subject: 'Order 1042 shipped', text: 'On its way.' });
    await expect.poll(() => receiver.requests.length, { timeout: DELIVERY_MS }).toBe(1);
    const [posted] = receiver.requests;
    expect(posted?.url).toBe('/hooks/tempinbox');
    expect(await verifyWebhookSignature(SECRET, String(posted?.headers['tempinbox-signature']), posted?.body ?? '', 60)).toBe(true);
    expect(JSON.parse(posted?.body ?? '{}')).toMatchObject({ event: 'message.received', inbox: address, message: { subject: 'Order 1042 shipped' } });
    await expect.poll(() => rows(page).count(), { timeout: DELIVERY_MS }).toBe(1);
    expect(await rows(page).first().locator('td').allTextContents()).toEqual([expect.any(String), 'Message', '1 of 6', 'Delivered (HTTP 200)']);

    // Send test: the test event through the same queue, listed on top after the page's refresh.
    await page.getByRole('button', { name: 'Send test' }).click();
    await expect.poll(() => receiver.requests.length, { timeout: DELIVERY_MS }).toBe(2);
    expect(JSON.parse(receiver.requests[1]?.body ?? '{}')).toEqual({ event: 'message.test', inbox: address, message: null });
    await expect.poll(() => rows(page).count(), { timeout: DELIVERY_MS }).toBe(2);
    expect(await rows(page).first().locator('td').allTextContents()).toEqual([expect.any(String), 'Test', '1 of 6', 'Delivered (HTTP 200)']);
    await expect.poll(() => page.getByText('Test sent.').count()).toBe(0); // the table says the rest now
    await page.getByTestId('webhook').scrollIntoViewIfNeeded();
    await page.getByTestId('webhook').screenshot({ path: resolve(SCREENSHOT_DIR, 'webhook-panel.png') });
    await screenshot(page, 'webhook');
    // A narrow screen scrolls the table inside the panel, never the page.
    await page.setViewportSize({ width: 360, height: 800 });
    await expect.poll(() => page.evaluate('document.documentElement.scrollWidth')).toBe(360);
    await page.setViewportSize({ width: 1200, height: 900 });

    // After a reload the secret is gone for good; the webhook and its deliveries stay.
    await page.reload();
    await page.getByTestId('premium-badge').waitFor();
    await page.getByTestId('webhook-summary-on').waitFor();
    await page.getByText('Webhook:').click();
    await expect.poll(() => rows(page).count()).toBe(2);
    expect(await page.getByTestId('webhook-secret').count()).toBe(0);
    expect(await page.content()).not.toContain(SECRET);

    // Remove: the form comes back, and a mail posts nothing more.
    await page.getByRole('button', { name: 'Remove webhook' }).click();
    await page.getByLabel('Webhook URL').waitFor();
    const state = await page.context().request.get(`${server.baseUrl}/api/inbox/${encodeURIComponent(address)}/webhook`);
    expect(((await state.json()) as { webhook: unknown }).webhook).toBeNull();
    await sendWithNodemailer(server.smtpPort, { to: address, subject: 'After removal', text: 'Nothing to post.' });
    await page.getByTestId('message-item').filter({ hasText: 'After removal' }).waitFor({ timeout: DELIVERY_MS });
    await pause(SETTLE_MS);
    expect(receiver.requests.length).toBe(2);
    await page.context().close();
  });

  it('says each refusal in plain words', async () => {
    const { page } = await premiumPage();

    // What the page judges before sending.
    await save(page, 'hooks.example.com/in');
    expect(await alertText(page)).toBe('Enter a full address that starts with https:// or http://.');
    await save(page, 'https://hooks.example.com/in', 'too short');
    expect(await alertText(page)).toMatch(/^A secret has 16 to 128 characters\./);

    // The server's refusal of an address that is not public (10/8 is not opened here).
    await save(page, 'http://10.1.2.3/hooks');
    await expect.poll(() => alertText(page)).toBe(
      'That URL points to a private, local or reserved address. Webhooks go only to servers reachable on the public internet.',
    );

    // Refusals this session cannot cause on demand (a lapsed license; a host that does not
    // resolve, which would need a DNS answer), answered in the API's shape.
    const refuse = (status: number, code: string) => ({
      status,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ success: false, error: { code, message: 'server wording' } }),
    });
    await page.route('**/api/inbox/*/webhook', (route) => (route.request().method() === 'PUT' ? route.fulfill(refuse(403, 'premium_required')) : route.fallback()));
    await save(page, 'https://hooks.example.com/in');
    await expect.poll(() => alertText(page)).toMatch(/^Webhooks need Premium\. Enter a license key first/);
    await page.unroute('**/api/inbox/*/webhook');
    await page.route('**/api/inbox/*/webhook', (route) => (route.request().method() === 'PUT' ? route.fulfill(refuse(400, 'invalid_request')) : route.fallback()));
    await save(page, 'https://no-such-host.example/in');
    await expect.poll(() => alertText(page)).toMatch(/^That webhook was refused: use an http:\/\/ or https:\/\/ URL whose host name exists/);
    await page.unroute('**/api/inbox/*/webhook');
    expect(await page.getByTestId('webhook-summary-on').count()).toBe(0);
    await page.context().close();
  });
});
