import { generateKeyPairSync } from 'node:crypto';
import { dkimSign } from 'mailauth';
import { describe, expect, it } from 'vitest';
import { MailauthSenderAuthenticator } from './mailauth-sender-authenticator.js';

const notFound = () => Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }));

/** A message of about `bytes` bytes of CRLF-ended text. */
function message(bytes: number): Buffer {
  const line = 'The quick brown fox jumps over the lazy dog 0123456789 abcdefghijklmnopqrstuvw\r\n';
  return Buffer.from(`From: a@example.org\r\nTo: b@tempinbox.test\r\nSubject: big\r\n\r\n${line.repeat(Math.ceil(bytes / line.length))}`);
}

describe('MailauthSenderAuthenticator', () => {
  it('lets timers run while a large signed message is hashed (the event loop is never held for the whole message)', async () => {
    const checker = new MailauthSenderAuthenticator({ serverName: 'mx.test', dnsTimeoutMs: 3000, lookup: notFound });
    // Signed, so that the body is read: an unsigned message's body is not (bytesToCheck).
    const unsigned = message(4 * 1024 * 1024);
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const key = { signingDomain: 'example.org', selector: 's1', privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };
    // mailauth's signer reads signatureData; its typings want the top-level fields as well.
    const signature = await dkimSign(unsigned, { ...key, signatureData: [key] });
    const signed = Buffer.concat([Buffer.from(signature.signatures), unsigned]);
    let ticks = 0;
    const ticker = setInterval(() => (ticks += 1), 0);
    try {
      const outcome = await checker.check({ message: signed, clientAddress: '192.0.2.1', helo: 'client.test', envelopeFrom: 'a@example.org' });
      expect(outcome.auth.spf.result).toBe('none');
      expect(outcome.auth.dkim).toEqual([{ result: 'permerror', domain: 'example.org', selector: 's1' }]);
    } finally {
      clearInterval(ticker);
    }
    // 4 MiB is 64 slices; handed over in one piece (or through stream plumbing alone) no timer runs at all.
    expect(ticks).toBeGreaterThan(5);
  });

  it('reads an IPv4-mapped socket address as IPv4 and names our server as authserv-id', async () => {
    const checker = new MailauthSenderAuthenticator({ serverName: 'mx.test', dnsTimeoutMs: 3000, lookup: notFound });
    const outcome = await checker.check({ message: message(100), clientAddress: '::ffff:192.0.2.1', helo: 'client.test', envelopeFrom: 'a@example.org' });
    const header = Buffer.from(outcome.header).toString('utf8');
    expect(header.startsWith('Authentication-Results: mx.test;\r\n')).toBe(true);
    expect(header).toContain('smtp.remote-ip=192.0.2.1');
    expect(header.endsWith('\r\n')).toBe(true);
    expect(outcome.auth).toEqual({
      spf: { result: 'none', domain: 'example.org' },
      dkim: [],
      dmarc: { result: 'none', domain: 'example.org', policy: null },
      arc: { result: 'none' },
    });
  });
});
