import { mkdirSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { closeAtFileEnd } from '../helpers/child-processes.js';
import { toolPath } from '../helpers/external-tools.js';

/** Where the test run writes screenshots of the main states (git-ignored; one is copied to docs/). */
export const SCREENSHOT_DIR = resolve(import.meta.dirname, '../../test-output/screenshots');

/**
 * Starts headless Chromium on loopback with everything that phones home turned off: the
 * `chromium` on PATH (Debian's /usr/bin/chromium, which .ci/run installs; playwright-core
 * downloads no browser). Guard the file with toolAvailable('chromium', …). The browser is
 * closed at the end of the file if the file does not close it (a set-up that failed).
 */
export async function launchBrowser(): Promise<Browser> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const browser = await chromium.launch({
    executablePath: toolPath('chromium'),
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const closing = closeAtFileEnd(() => browser.close());
  browser.once('disconnected', closing.forget);
  return browser;
}

/** Writes a full-page screenshot named `<name>.png` into SCREENSHOT_DIR. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: resolve(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
}

/** One request the hit server saw. */
export interface Hit {
  path: string;
  headers: IncomingHttpHeaders;
}

/** A local HTTP server standing in for every remote host a hostile mail points at; it counts hits. */
export interface HitServer {
  base: string;
  hits: Hit[];
  /** Hits whose path starts with `/<prefix>`. */
  count: (prefix: string) => number;
  close: () => Promise<void>;
}

/** A 1×1 transparent PNG, so image requests succeed like a real tracking pixel. */
const PIXEL = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64');

/** Starts the hit server on a free loopback port. */
export async function startHitServer(): Promise<HitServer> {
  const hits: Hit[] = [];
  const server: Server = createServer((request, response) => {
    const path = request.url ?? '/';
    hits.push({ path, headers: request.headers });
    if (path.endsWith('.png')) {
      response.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'no-store' });
      response.end(PIXEL);
    } else {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      response.end('<!doctype html><title>remote</title><p>remote page</p>');
    }
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    base: `http://127.0.0.1:${port}`,
    hits,
    count: (prefix) => hits.filter((hit) => hit.path.startsWith(`/${prefix}`)).length,
    close: () => new Promise<void>((done) => {
      server.closeAllConnections();
      server.close(() => done());
    }),
  };
}

/** What a page did that hostile content might have caused. */
export interface SideEffects {
  dialogs: string[];
  popups: string[];
  pageErrors: string[];
  consoleErrors: string[];
  /** URLs the top frame navigated to after the first load. */
  navigations: string[];
}

/** An inbox's event stream, whatever the inbox and query. */
export const EVENTS_PATH = /\/api\/inbox\/[^/]+\/events/;

/** Records dialogs (auto-dismissed), new pages, uncaught errors, console errors and top-frame navigations. */
export function watchSideEffects(context: BrowserContext, page: Page): SideEffects {
  const effects: SideEffects = { dialogs: [], popups: [], pageErrors: [], consoleErrors: [], navigations: [] };
  page.on('dialog', (dialog) => {
    effects.dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  context.on('page', (popup) => effects.popups.push(popup.url()));
  page.on('pageerror', (error) => effects.pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    // The one expected error: a server without the event stream answers its URL with 404 and
    // the page polls instead (docs/web.md, "Live mail"). Any other failed load still counts.
    if (EVENTS_PATH.test(message.location().url) && message.text().includes('404')) return;
    effects.consoleErrors.push(message.text());
  });
  let loaded = false;
  page.on('framenavigated', (frame) => {
    if (frame !== page.mainFrame()) return;
    if (loaded) effects.navigations.push(frame.url());
    loaded = true;
  });
  return effects;
}

/** Asserts that nothing ran, opened, alerted or navigated: no dialog, new page, uncaught error or top-frame navigation. */
export function expectNoSideEffects(effects: SideEffects): void {
  expect(effects.dialogs).toEqual([]);
  expect(effects.popups).toEqual([]);
  expect(effects.navigations).toEqual([]);
  expect(effects.pageErrors).toEqual([]);
}

/** Resolves after `ms`: only for proving an absence (nothing fetched), never to wait for a presence. */
export function pause(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}
