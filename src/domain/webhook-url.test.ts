import { describe, expect, it } from 'vitest';
import { parseWebhookUrl, WEBHOOK_URL_MAX_LENGTH } from './webhook-url.js';

describe('parseWebhookUrl', () => {
  it('takes an https URL apart for the request: host, Host header, port, path and query', () => {
    expect(parseWebhookUrl('https://Hooks.Example.org/in/tempinbox?token=a%20b#frag')).toEqual({
      ok: true,
      url: {
        href: 'https://hooks.example.org/in/tempinbox?token=a%20b#frag',
        protocol: 'https:',
        hostname: 'hooks.example.org',
        hostHeader: 'hooks.example.org',
        port: 443,
        path: '/in/tempinbox?token=a%20b',
      },
    });
  });

  it('keeps a non-default port in the Host header, and the default port of http', () => {
    expect(parseWebhookUrl('http://hook.test:8080')).toMatchObject({ ok: true, url: { hostname: 'hook.test', hostHeader: 'hook.test:8080', port: 8080, path: '/' } });
    expect(parseWebhookUrl('http://hook.test:80/x')).toMatchObject({ ok: true, url: { hostHeader: 'hook.test', port: 80 } });
  });

  it('gives address literals in their normal form, IPv6 without brackets', () => {
    // The URL parser reads every IPv4 spelling (hex, one number, short forms) as the address it is.
    expect(parseWebhookUrl('http://0x7f.1/')).toMatchObject({ ok: true, url: { hostname: '127.0.0.1' } });
    expect(parseWebhookUrl('http://2130706433/')).toMatchObject({ ok: true, url: { hostname: '127.0.0.1' } });
    expect(parseWebhookUrl('http://[::FFFF:127.0.0.1]:8/')).toMatchObject({ ok: true, url: { hostname: '::ffff:7f00:1', hostHeader: '[::ffff:7f00:1]:8' } });
  });

  it('turns an international host name into its ASCII form', () => {
    expect(parseWebhookUrl('https://bücher.example/')).toMatchObject({ ok: true, url: { hostname: 'xn--bcher-kva.example' } });
  });

  it.each([
    ['', 'empty'],
    ['hooks.example.org/in', 'not a valid absolute URL'],
    ['ftp://hooks.example.org/', 'http:// or https://'],
    ['file:///etc/passwd', 'http:// or https://'],
    ['javascript:alert(1)', 'http:// or https://'],
    ['https://user@hooks.example.org/', 'user name or password'],
    ['https://user:pass@hooks.example.org/', 'user name or password'],
    ['https://:pass@hooks.example.org/', 'user name or password'],
    ['https://hooks.example.org/ in', 'spaces or control characters'],
    [' https://hooks.example.org/', 'spaces or control characters'],
    ['https://hooks.exa\nmple.org/', 'spaces or control characters'],
    ['http://[::1/', 'not a valid absolute URL'],
    ['http://hook.test:99999/', 'not a valid absolute URL'],
  ])('refuses %j (%s)', (raw, reason) => {
    const verdict = parseWebhookUrl(raw);
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) expect(verdict.reason).toContain(reason);
  });

  it('takes 2,048 characters and refuses one more, before and after normalisation', () => {
    const base = 'https://hooks.example.org/';
    expect(parseWebhookUrl(base + 'a'.repeat(WEBHOOK_URL_MAX_LENGTH - base.length)).ok).toBe(true);
    expect(parseWebhookUrl(base + 'a'.repeat(WEBHOOK_URL_MAX_LENGTH - base.length + 1))).toMatchObject({ ok: false, reason: expect.stringContaining('2048') });
    // 1,000 "é" are 1,026 characters as written and 6,026 once percent-encoded.
    expect(parseWebhookUrl(base + 'é'.repeat(1000))).toMatchObject({ ok: false, reason: expect.stringContaining('normalised') });
  });
});
