import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../../../test/browser/browser-helpers.js';
import { toolAvailable } from '../../../test/helpers/external-tools.js';
import { deliver, startKitServer, type KitServer } from './kit-server.js';

/** The built library (npm test builds the packages first), as a browser loads it. */
const DIST = resolve(import.meta.dirname, '../dist');

const hasChromium = toolAvailable('chromium', 'the client library in a browser');

/**
 * The library's main entry in a real Chromium: loaded as ES modules from the server's own
 * origin (served by the test), it uses only `fetch`, so a Node built-in anywhere in it would
 * fail the import.
 */
describe.skipIf(!hasChromium)('@tempinbox/client in a browser', () => {
  let kit: KitServer;
  let browser: Browser;

  beforeAll(async () => {
    [kit, browser] = await Promise.all([startKitServer({ RATE_LIMITS: 'off' }), launchBrowser()]);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await kit?.close();
  });

  it('creates an inbox and gets a code with the page session, using only fetch', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    // The page and the library come from the server's origin, so the API calls are same-origin.
    await page.route(`${kit.server.baseUrl}/kit/**`, async (route) => {
      const path = new URL(route.request().url()).pathname.slice('/kit/'.length);
      if (path === 'index.html') {
        const page = "<!doctype html><title>kit</title><script type=module>import * as kit from '/kit/index.js'; window.kit = kit;</script>";
        await route.fulfill({ contentType: 'text/html; charset=utf-8', body: page });
        return;
      }
      const file = resolve(DIST, path);
      if (!file.startsWith(`${DIST}/`)) return route.abort();
      await route.fulfill({ contentType: 'text/javascript; charset=utf-8', body: readFileSync(file) });
    });
    await page.goto(`${kit.server.baseUrl}/kit/index.html`);
    await page.waitForFunction(() => 'kit' in globalThis, undefined, { timeout: 10_000 });

    const created = await page.evaluate(async (origin) => {
      const { TempInboxClient } = (globalThis as unknown as { kit: typeof import('../src/index.js') }).kit;
      const client = new TempInboxClient({ baseUrl: origin });
      const inbox = await client.createInbox();
      Object.assign(globalThis, { kitClient: client });
      return { address: inbox.address, expires: inbox.expiresAt.getTime(), session: client.session };
    }, kit.server.baseUrl);
    expect(created.address).toMatch(/^[a-z][a-z0-9]{9}@tempinbox\.test$/);
    expect(created.expires).toBeGreaterThan(Date.now());
    // The cookie is HttpOnly: the browser keeps it, the page never sees it.
    expect(created.session).toBeUndefined();

    expect(await deliver(kit.server.smtpPort, created.address, 'Your code', 'Your verification code is 730512.')).toMatch(/^250/);
    const waited = await page.evaluate(async (address) => {
      const { kitClient } = globalThis as unknown as { kitClient: import('../src/index.js').TempInboxClient };
      const inbox = kitClient.inbox(address);
      const { code, message } = await inbox.waitForCode({ timeout: 10_000 });
      const raw = await inbox.raw(message.id);
      return { code, subject: message.subject, rawIsBytes: raw instanceof Uint8Array, rawStart: new TextDecoder().decode(raw.slice(0, 12)) };
    }, created.address);
    expect(waited).toEqual({ code: '730512', subject: 'Your code', rawIsBytes: true, rawStart: 'Return-Path:' });
    expect(errors).toEqual([]);
    await page.close();
  }, 30_000);
});
