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

  describe('an unsigned message from a sender seen before', () => {
    const ZONE: Record<string, string[]> = {
      'example.org': ['v=spf1 ip4:192.0.2.0/24 -all'],
      '_dmarc.example.org': ['v=DMARC1; p=reject'],
      '_dmarc.evil.test': ['v=DMARC1; p=quarantine'],
    };
    const zone = (name: string, rrtype: string): Promise<unknown> => {
      const records = rrtype === 'TXT' ? ZONE[name.toLowerCase()] : undefined;
      return records === undefined ? notFound() : Promise.resolve(records.map((record) => [record]));
    };
    const mail = (header: string, body = 'Hello.'): Buffer => Buffer.from(`${header}\r\nSubject: hi\r\nMessage-ID: <${Math.random()}@example.org>\r\n\r\n${body}\r\n`);
    const input = (message: Buffer, envelopeFrom = 'alice@example.org') => ({ message, clientAddress: '192.0.2.7', helo: 'example.org', envelopeFrom });

    it('gets the verdicts its sender and author got, and nothing else does', async () => {
      const cached = new MailauthSenderAuthenticator({ serverName: 'mx.test', dnsTimeoutMs: 3000, lookup: zone });
      const first = await cached.check(input(mail('From: Alice <alice@example.org>', 'first')));
      expect(first.auth.dmarc).toEqual({ result: 'pass', domain: 'example.org', policy: 'reject' });
      // Another body, Message-ID and subject: the same outcome, not evaluated again.
      expect(await cached.check(input(mail('From: Alice <alice@example.org>', 'second')))).toBe(first);
      // Each of these differs in what its verdicts read: each must get its own, as a fresh checker gives it.
      const others: Array<[string, ReturnType<typeof input>]> = [
        ['another author', input(mail('From: <x@evil.test>'))],
        ['an author folded before the colon', input(mail('From\r\n : <x@evil.test>'))],
        ['a second From field', input(mail('From: Alice <alice@example.org>\r\nFrom: <x@evil.test>'))],
        ['another envelope sender', input(mail('From: Alice <alice@example.org>'), 'bob@evil.test')],
        ['the null sender with a Return-Path', input(mail('Return-Path: <x@evil.test>\r\nFrom: Alice <alice@example.org>'), '')],
        ['another client address', { ...input(mail('From: Alice <alice@example.org>')), clientAddress: '198.51.100.1' }],
      ];
      for (const [name, other] of others) {
        const fresh = new MailauthSenderAuthenticator({ serverName: 'mx.test', dnsTimeoutMs: 3000, lookup: zone });
        const got = await cached.check(other);
        expect(got, name).not.toBe(first);
        expect(got, name).toEqual(await fresh.check(other));
      }
      expect(Object.isFrozen(first.auth) && Object.isFrozen(first.auth.dmarc)).toBe(true);
    });

    it('is evaluated again after a temperror, and a signed message always is', async () => {
      let failing = true;
      const flaky = (name: string, rrtype: string): Promise<unknown> =>
        failing && name === '_dmarc.example.org' ? Promise.reject(Object.assign(new Error('timeout'), { code: 'ETIMEOUT' })) : zone(name, rrtype);
      const checker = new MailauthSenderAuthenticator({ serverName: 'mx.test', dnsTimeoutMs: 3000, lookup: flaky });
      const message = mail('From: Alice <alice@example.org>');
      expect((await checker.check(input(message))).auth.dmarc.result).toBe('temperror');
      failing = false;
      expect((await checker.check(input(message))).auth.dmarc.result).toBe('pass');
      const signed = Buffer.concat([Buffer.from('DKIM-Signature: v=1; a=rsa-sha256; d=example.org; s=s1; h=from; bh=x; b=x\r\n'), message]);
      const once = await checker.check(input(signed));
      expect(once.auth.dkim).toHaveLength(1);
      expect(await checker.check(input(signed))).not.toBe(once);
    });
  });
});
