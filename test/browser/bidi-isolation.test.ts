import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendWithNodemailer } from '../helpers/send-mail.js';
import { startServer, tempDataDir, type ServerProcess } from '../helpers/server-process.js';
import { EVENTS_PATH, launchBrowser, screenshot } from './browser-helpers.js';

/** New mail must show within this time without a reload (polling every 3 s on a loaded machine). */
const ARRIVAL_MS = 10_000;

const RLO = '\u202e';
const LRI = '\u2066';
const PDI = '\u2069';
/** The controls that reorder text (U+202A–U+202E, U+2066–U+2069): none may reach the page as text. */
const REORDERING = /[\u202a-\u202e\u2066-\u2069]/;

/**
 * Right-to-left overrides in mail, in Chromium (docs/web.md "Security model"): a sender name
 * with U+202E must not reverse or hide the real address (nor the next message opened), and
 * `Invoice U+202Efdp.exe` must not read as `exe.pdf`. The page isolates every mail-derived
 * string and shows each control as a visible marker; the check is on what is drawn: the screen
 * position of each character of the address and of the file name, left to right.
 */
describe('web app: bidirectional text in mail', { timeout: 90_000 }, () => {
  let server: ServerProcess;
  let browser: Browser;
  const data = tempDataDir();

  beforeAll(async () => {
    [server, browser] = await Promise.all([startServer({ DATABASE_URL: data.databaseUrl, RATE_LIMITS: 'off', MAIL_AUTH: 'off' }), launchBrowser()]);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    expect(await server?.stop()).toBe(0);
    data.cleanup();
  });

  /**
   * The x position of each character of `text` where it is drawn inside `element` (its first
   * occurrence in one text node). Its body is text, as it runs in the page: the tests are
   * compiled without the DOM's types.
   */
  const drawnLefts = new Function('root', 'wanted', `
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
      const at = (node.textContent ?? '').indexOf(wanted);
      if (at < 0) continue;
      return Array.from(wanted, (_, i) => {
        const range = document.createRange();
        range.setStart(node, at + i);
        range.setEnd(node, at + i + 1);
        return range.getBoundingClientRect().left;
      });
    }
    return [];
  `) as (root: unknown, wanted: string) => number[];
  const charLefts = (element: Locator, text: string): Promise<number[]> => element.evaluate(drawnLefts, text);

  /** True when the characters are drawn strictly left to right: the text reads as written. */
  const readsLeftToRight = (lefts: number[]): boolean => lefts.length > 0 && lefts.every((left, i) => i === 0 || left > (lefts[i - 1] ?? Infinity));

  async function open(page: Page, subject: string): Promise<void> {
    const item = page.getByTestId('message-item').filter({ hasText: subject });
    await item.waitFor({ timeout: ARRIVAL_MS });
    await item.click();
    await page.getByTestId('reader').locator('.reader__subject', { hasText: subject }).waitFor();
  }

  it('isolates names, addresses, subjects and file names, and shows every override as a marker', async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, reducedMotion: 'reduce' });
    const page = await context.newPage();
    // The server already drops direction controls from attachment names (src/mail/safe-filename.ts);
    // the page must not rely on it, so the listing gets one back, as an older server would send it.
    // The listing is what the page reads while the stream is down (a server without one answers 404).
    await context.route(EVENTS_PATH, (route) => route.fulfill({ status: 404, contentType: 'application/json', body: '{"success":false,"error":{"code":"not_found","message":"no stream"}}' }));
    await context.route(/\/api\/check\//, async (route) => {
      const response = await route.fetch();
      const body = (await response.json()) as { emails: Array<{ attachments: Array<{ filename: string }> }> };
      for (const email of body.emails) for (const attachment of email.attachments) attachment.filename = attachment.filename.replace('Invoice fdp', `Invoice ${RLO}fdp`);
      await route.fulfill({ response, json: body });
    });
    await page.goto(server.baseUrl);
    await page.getByTestId('address').waitFor();
    const address = (await page.getByTestId('address').textContent()) ?? '';

    // Unisolated, the name reverses everything after it: "support@bank.test" on screen, the real address backwards.
    await sendWithNodemailer(server.smtpPort, {
      from: { name: `Support ${RLO}tset.knab@troppus`, address: 'attacker@evil.test' },
      to: address,
      subject: `Invoice ${RLO}fdp.exe attached`,
      text: `See the file.`,
      attachments: [{ filename: `Invoice ${RLO}fdp.exe`, content: Buffer.from('MZ not really a program'), contentType: 'application/octet-stream' }],
    });
    await sendWithNodemailer(server.smtpPort, { from: { name: `Isolate ${LRI}opened`, address: 'isolate@evil.test' }, to: address, subject: `Unbalanced ${PDI} close`, text: 'x' });
    await sendWithNodemailer(server.smtpPort, { from: { name: 'Plain Sender', address: 'plain@example.org' }, to: address, subject: 'An ordinary message', text: 'Nothing to see.' });
    await page.getByTestId('message-item').nth(2).waitFor({ timeout: ARRIVAL_MS });

    // Nothing that reorders reaches the page as text: not the list, the reader, the title, the live region.
    const hostile = page.getByTestId('message-item').filter({ hasText: 'Invoice' });
    await open(page, 'Invoice');
    const reader = page.getByTestId('reader');
    expect(REORDERING.test(await page.evaluate('document.body.innerText'))).toBe(false);
    expect(REORDERING.test(await page.evaluate('document.title'))).toBe(false);
    expect(REORDERING.test((await page.getByTestId('announcer').textContent()) ?? '')).toBe(false);

    // The From row: the name with a visible RLO marker, then the real address, drawn left to right.
    const fromRow = reader.locator('.reader__meta dd').first();
    expect(await fromRow.innerText()).toBe('Support RLOtset.knab@troppus <attacker@evil.test>');
    expect(readsLeftToRight(await charLefts(fromRow, 'attacker@evil.test'))).toBe(true);
    const [nameLeft = 0] = await charLefts(fromRow, 'Support');
    const [addressLeft = 0] = await charLefts(fromRow, 'attacker@evil.test');
    expect(addressLeft).toBeGreaterThan(nameLeft);
    expect(await fromRow.locator('.bidi-control').first().getAttribute('title')).toContain('U+202E');

    // The subject and the file name read as written: ".exe" is where it is, and seen.
    expect(readsLeftToRight(await charLefts(reader.locator('.reader__subject'), 'fdp.exe attached'))).toBe(true);
    const attachment = reader.locator('.attachment').first();
    expect(await attachment.locator('.attachment__name').innerText()).toBe('Invoice RLOfdp.exe');
    expect(readsLeftToRight(await charLefts(attachment, 'fdp.exe'))).toBe(true);
    expect(await attachment.getAttribute('download')).toBe('Invoice fdp.exe');
    // The list row: the name and the subject isolated too.
    expect(await hostile.locator('.message-item__from').innerText()).toBe('Support RLOtset.knab@troppus');
    expect(readsLeftToRight(await charLefts(hostile, 'fdp.exe attached'))).toBe(true);
    await screenshot(page, 'bidi-override');
    await reader.screenshot({ path: '/tmp/i33-trust-bidi-reader.png' });
    await page.locator('.message-list').screenshot({ path: '/tmp/i33-trust-bidi-list.png' });

    // The download is named without the control (the page's suggestion and the server's header agree).
    const [download] = await Promise.all([page.waitForEvent('download'), attachment.click()]);
    expect(download.suggestedFilename()).toBe('Invoice fdp.exe');

    // An isolate opened in a name and a stray close in a subject are markers too.
    await open(page, 'Unbalanced');
    expect(await reader.locator('.reader__meta dd').first().innerText()).toBe('Isolate LRIopened <isolate@evil.test>');
    expect(await reader.locator('.reader__subject').innerText()).toBe('Unbalanced PDI close');

    // The next message opened reads as written: nothing of the override is left over.
    await open(page, 'An ordinary message');
    const plainRow = reader.locator('.reader__meta dd').first();
    expect(await plainRow.innerText()).toBe('Plain Sender <plain@example.org>');
    expect(readsLeftToRight(await charLefts(plainRow, 'plain@example.org'))).toBe(true);
    expect(readsLeftToRight(await charLefts(reader.locator('.reader__subject'), 'An ordinary message'))).toBe(true);
    await reader.screenshot({ path: '/tmp/i33-trust-bidi-next.png' });
    await context.close();
  });
});
