import { generateKeyPairSync } from 'node:crypto';
import nodemailer from 'nodemailer';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLoopbackDnsServer, type LoopbackDnsServer } from '../../support/loopback-dns-server.js';
import { sendRawSmtp } from '../helpers/send-raw-smtp.js';
import { startServer, tempDataDir, type ServerProcess } from '../helpers/server-process.js';
import { launchBrowser, screenshot } from './browser-helpers.js';

/** New mail must show within this time without a reload (polling every 3 s on a loaded machine). */
const ARRIVAL_MS = 10_000;

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });

/** evil.test's mail server (allowed by evil.test's SPF record), and bank.test's own. */
const EVIL_SERVER = '127.0.0.2';
const BANK_SERVER = '127.0.0.3';

/** bank.test publishes p=reject; evil.test signs its mail and lists its server. */
const ZONE = {
  'bank.test': [`v=spf1 ip4:${BANK_SERVER} -all`],
  '_dmarc.bank.test': ['v=DMARC1; p=reject'],
  'evil.test': [`v=spf1 ip4:${EVIL_SERVER} -all`],
  's1._domainkey.evil.test': [`v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`],
};

/**
 * The sender badge in Chromium, from verdicts the started program worked out over real SMTP
 * against a DNS server of the test's own (docs/web.md "Reading"): green only for a DMARC pass,
 * with the From domain named; a message claiming bank.test with a second From field is red,
 * and one signed by evil.test for another From domain is grey and says who signed. Screenshots
 * of each are written to test-output/screenshots and /tmp.
 */
describe('web app: the sender badge of forged and foreign-signed mail', { timeout: 90_000 }, () => {
  let dns: LoopbackDnsServer;
  let server: ServerProcess;
  let browser: Browser;
  const data = tempDataDir();

  beforeAll(async () => {
    dns = await startLoopbackDnsServer(ZONE);
    [server, browser] = await Promise.all([
      startServer({ DATABASE_URL: data.databaseUrl, RATE_LIMITS: 'off', MAIL_AUTH: 'on', DNS_SERVERS: dns.address }),
      launchBrowser(),
    ]);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    expect(await server?.stop()).toBe(0);
    await dns?.close();
    data.cleanup();
  });

  /** Opens the message with `subject` and returns its badge: words, tone class and the From row. */
  async function badgeOf(page: Page, subject: string) {
    const item = page.getByTestId('message-item').filter({ hasText: subject });
    await item.waitFor({ timeout: ARRIVAL_MS });
    await item.click();
    const badge = page.getByTestId('auth');
    await badge.waitFor();
    // The reader keeps its elements from one message to the next: open the explanation if it is shut.
    if ((await badge.getAttribute('open')) === null) await badge.locator('summary').click();
    return {
      label: await badge.locator('summary').textContent(),
      tone: await badge.getAttribute('class'),
      details: await badge.locator('li').allTextContents(),
      from: await page.locator('.reader__meta dd').first().textContent(),
    };
  }

  const message = (headers: string[], subject: string): Buffer =>
    Buffer.from(`${headers.join('\r\n')}\r\nTo: <placeholder@tempinbox.test>\r\nSubject: ${subject}\r\nMessage-ID: <${subject.replace(/\W/g, '')}@x.test>\r\n\r\nPlease confirm your account details.\r\n`);

  it('is red for a second From field, grey and named for a foreign signer, green only for a DMARC pass', async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, reducedMotion: 'reduce' });
    const page = await context.newPage();
    await page.goto(server.baseUrl);
    await page.getByTestId('address').waitFor();
    const address = (await page.getByTestId('address').textContent()) ?? '';

    const send = async (raw: Buffer, client: string, envelope: string) =>
      expect(await sendRawSmtp(server.smtpPort, envelope, address, raw, { localAddress: client, helo: 'mx.sender.test' })).toMatch(/^250 /);
    await send(message(['From: Bank Security <security@bank.test>', 'From: <bounce@evil.test>'], 'Two From fields'), EVIL_SERVER, 'bounce@evil.test');
    const signed = await nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' }).sendMail({
      from: '"Newsletter" <news@unrelated.test>',
      to: address,
      subject: 'Signed by another domain',
      text: 'Our monthly news.\n',
      dkim: { domainName: 'evil.test', keySelector: 's1', privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string },
    });
    await send(signed.message as Buffer, EVIL_SERVER, 'bounce@evil.test');
    await send(message(['From: Bank Security <security@bank.test>'], 'From the bank'), BANK_SERVER, 'security@bank.test');

    const twoFrom = await badgeOf(page, 'Two From fields');
    expect(twoFrom.label).toBe('Sender cannot be verified ✗');
    expect(twoFrom.tone).toContain('auth--bad');
    expect(twoFrom.details[0]).toContain('does not name exactly one sender');
    expect(twoFrom.details.join(' ')).not.toContain('publishes no DMARC policy');
    await screenshot(page, 'badge-two-from');
    await page.getByTestId('reader').screenshot({ path: '/tmp/i33-trust-badge-two-from.png' });

    const foreign = await badgeOf(page, 'Signed by another domain');
    expect(foreign.label).toBe('Signed by evil.test, not unrelated.test');
    expect(foreign.tone).toContain('auth--neutral');
    expect(foreign.details).toContain('DKIM passed: signed by evil.test, which is not the From domain unrelated.test; a signature vouches only for its own domain.');
    await screenshot(page, 'badge-foreign-signer');
    await page.getByTestId('reader').screenshot({ path: '/tmp/i33-trust-badge-foreign-signer.png' });

    const bank = await badgeOf(page, 'From the bank');
    expect(bank.label).toBe('Verified as bank.test ✓');
    expect(bank.tone).toContain('auth--good');
    await page.getByTestId('reader').screenshot({ path: '/tmp/i33-trust-badge-verified.png' });
    await context.close();
  });
});
