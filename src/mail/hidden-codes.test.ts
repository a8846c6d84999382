import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseMail } from './parse-mail.js';

/**
 * Messages that hide a code ("111111") before the one a reader sees ("222222"), one hiding
 * technique each, and messages where a descendant shows again what its parent hid ("333333").
 */
interface HiddenCodeMessage {
  id: string;
  technique: string;
  subject: string;
  html: string;
  codes: string[];
}

const FIXTURES = new URL('../../test/fixtures/hidden-codes.json', import.meta.url);
const messages = JSON.parse(readFileSync(FIXTURES, 'utf8')) as HiddenCodeMessage[];

const CONTEXT = { envelopeFrom: 'noreply@service.test', recipient: 'reader@tempinbox.test' };
const encoder = new TextEncoder();

function htmlOnly(subject: string, html: string): Uint8Array {
  return encoder.encode(['From: noreply@service.test', `Subject: ${subject}`, 'Content-Type: text/html; charset=utf-8', '', html, ''].join('\r\n'));
}

function alternative(subject: string, text: string, html: string): Uint8Array {
  return encoder.encode(
    [
      'From: noreply@service.test',
      `Subject: ${subject}`,
      'MIME-Version: 1.0',
      'Content-Type: multipart/alternative; boundary="alt"',
      '',
      '--alt',
      'Content-Type: text/plain; charset=utf-8',
      '',
      text,
      '--alt',
      'Content-Type: text/html; charset=utf-8',
      '',
      html,
      '--alt--',
      '',
    ].join('\r\n'),
  );
}

describe('codes are what a reader sees', () => {
  it('has a fixture for each hiding technique', () => {
    expect(messages.filter((message) => message.codes[0] === '222222').length).toBeGreaterThanOrEqual(20);
    expect(new Set(messages.map((message) => message.id)).size).toBe(messages.length);
  });

  it.each(messages.map((message) => [`${message.id}: ${message.technique}`, message] as const))('%s', async (_label, message) => {
    const parsed = await parseMail(htmlOnly(message.subject, message.html), CONTEXT);
    expect(parsed.codes).toEqual(message.codes);
  });

  it('takes the codes of a multipart message from its HTML, not from its text part', async () => {
    const parsed = await parseMail(
      alternative('Sign in to Example', 'Your verification code: 111111', '<p>Your verification code:</p><p><b>222222</b></p>'),
      CONTEXT,
    );
    expect(parsed.text).toContain('111111');
    expect(parsed.codes).toEqual(['222222']);
  });

  it('finds no code in a multipart message whose HTML hides the only one, whatever its text part says', async () => {
    const parsed = await parseMail(
      alternative('Sign in to Example', 'Your verification code: 111111', '<p>Your verification code:</p><p style="display:none">111111</p><p>Open the app.</p>'),
      CONTEXT,
    );
    expect(parsed.codes).toEqual([]);
  });

  it('uses the text part when there is no HTML', async () => {
    const raw = encoder.encode('From: noreply@service.test\r\nSubject: Sign in\r\nContent-Type: text/plain\r\n\r\nYour verification code: 444444\r\n');
    expect((await parseMail(raw, CONTEXT)).codes).toEqual(['444444']);
  });

  it('keeps what the sender hid hidden in the sanitised HTML the reading frame shows', async () => {
    const parsed = await parseMail(
      htmlOnly('x', '<div hidden>a</div><div style="visibility:hidden;opacity:0;max-height:0;overflow:hidden">b</div>'),
      CONTEXT,
    );
    expect(parsed.html).toBe('<div hidden>a</div><div style="visibility:hidden;opacity:0;max-height:0;overflow:hidden">b</div>');
  });
});

describe('links are what a reader sees', () => {
  it('lists no link that is hidden, and keeps image links set in zero-size text', async () => {
    const html = [
      '<div style="display:none"><a href="https://hidden.test/1">hidden block</a></div>',
      '<a href="https://hidden.test/2" style="visibility:hidden">invisible</a>',
      '<p hidden>https://hidden.test/3 in hidden text</p>',
      '<a href="https://hidden.test/4"><span style="font-size:0">zero-size text only</span></a>',
      '<a href="https://hidden.test/5" style="opacity:0">transparent</a>',
      '<a href="https://hidden.test/6"></a>',
      '<table><tr><td style="font-size:0;line-height:0"><a href="https://shown.test/logo"><img src="https://shown.test/logo.png" alt="Logo"></a></td></tr></table>',
      '<p><a href="https://shown.test/verify">Verify <span style="display:none">secretly</span>your email</a></p>',
      '<p>Or paste https://shown.test/paste into your browser.</p>',
    ].join('');
    const parsed = await parseMail(htmlOnly('Links', html), CONTEXT);
    expect(parsed.links).toEqual([
      { url: 'https://shown.test/logo', text: '' },
      { url: 'https://shown.test/verify', text: 'Verify your email' },
      { url: 'https://shown.test/paste', text: '' },
    ]);
  });
});
