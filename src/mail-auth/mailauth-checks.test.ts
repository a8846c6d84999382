import { generateKeyPairSync } from 'node:crypto';
import { authenticate, dkimSign } from 'mailauth';
import { describe, expect, it } from 'vitest';
import { authenticationResultsHeader } from './authentication-results-header.js';
import { bytesToCheck, MAX_VERDICT_FIELDS_BYTES, runMailauthChecks, scanHeader, SpfVerdictCache, type MailauthCheckOptions } from './mailauth-checks.js';
import { mapMailauthResult } from './map-mailauth-result.js';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
const ZONE: Record<string, string[]> = {
  'example.org': ['v=spf1 include:_spf.example.org -all'],
  '_spf.example.org': ['v=spf1 ip4:192.0.2.0/24 -all'],
  's1._domainkey.example.org': [`v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`],
  '_dmarc.example.org': ['v=DMARC1; p=reject'],
};

/** A resolver over ZONE that counts its questions; `failing` names answer ETIMEOUT. */
function zoneResolver(failing: string[] = []): { resolver: MailauthCheckOptions['resolver']; questions: string[] } {
  const questions: string[] = [];
  const resolver = (name: string, rrtype: string): Promise<string[][]> => {
    questions.push(`${rrtype} ${name}`);
    if (failing.includes(name)) return Promise.reject(Object.assign(new Error('timeout'), { code: 'ETIMEOUT' }));
    const records = rrtype === 'TXT' ? ZONE[name.toLowerCase()] : undefined;
    if (records === undefined) return Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }));
    return Promise.resolve(records.map((record) => [record]));
  };
  return { resolver: resolver as MailauthCheckOptions['resolver'], questions };
}

const unsigned = Buffer.from('From: Alice <alice@example.org>\r\nTo: b@tempinbox.test\r\nSubject: hi\r\nMessage-ID: <1@example.org>\r\n\r\nHello.\r\n');

async function signed(selector = 's1'): Promise<Buffer> {
  const key = { signingDomain: 'example.org', selector, privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };
  // mailauth's signer reads signatureData; its typings want the top-level fields as well.
  const result = await dkimSign(unsigned, { ...key, signatureData: [key] });
  expect(result.signatures).toMatch(/^DKIM-Signature: /);
  return Buffer.concat([Buffer.from(result.signatures), unsigned]);
}

/** `unsigned` with its From line replaced by `lines`. */
const withFrom = (lines: string): Buffer => Buffer.from(unsigned.toString('latin1').replace('From: Alice <alice@example.org>', lines), 'latin1');

describe('runMailauthChecks', () => {
  it("gives what mailauth's authenticate() gives on the whole message, as the API and our header show it", async () => {
    const altered = Buffer.from((await signed()).toString('latin1').replace('Hello.', 'Hullo.'), 'latin1');
    const bodyLikeASignature = Buffer.from(`${unsigned.toString('latin1')}DKIM-Signature: v=1; d=example.org; s=s1\r\n`, 'latin1');
    const lfOnly = Buffer.from(unsigned.toString('latin1').replace(/\r\n/g, '\n'), 'latin1');
    const cases: Array<[string, Buffer, string, string, string]> = [
      ['unsigned, SPF pass', unsigned, '192.0.2.7', 'example.org', 'alice@example.org'],
      ['unsigned, SPF fail, DMARC fail', unsigned, '198.51.100.1', 'example.org', 'alice@example.org'],
      ['signed', await signed(), '198.51.100.1', 'example.org', 'alice@example.org'],
      ['body altered', altered, '192.0.2.7', 'example.org', 'alice@example.org'],
      ['no key for the selector', await signed('missing'), '192.0.2.7', 'example.org', 'alice@example.org'],
      ['null sender (SPF checks the HELO name)', unsigned, '192.0.2.7', 'example.org', ''],
      ['null sender, no HELO name (the address stands for it)', unsigned, '192.0.2.7', '', ''],
      ['null sender, an address as HELO name', unsigned, '192.0.2.7', '192.0.2.7', ''],
      ['unsigned, a body line that looks like a signature', bodyLikeASignature, '192.0.2.7', 'example.org', 'alice@example.org'],
      ['unsigned, LF line ends', lfOnly, '192.0.2.7', 'example.org', 'alice@example.org'],
      ['two From fields', withFrom('From: Alice <alice@example.org>\r\nFrom: <x@evil.test>'), '192.0.2.7', 'example.org', 'alice@example.org'],
      ['no From field', withFrom('Sender: <alice@example.org>'), '192.0.2.7', 'example.org', 'alice@example.org'],
      ['two addresses of one domain', withFrom('From: alice@example.org, bob@example.org'), '192.0.2.7', 'example.org', 'alice@example.org'],
    ];
    for (const [name, message, ip, helo, sender] of cases) {
      const options = { ip, helo, sender, mta: 'mx.tempinbox.test' };
      const ours = await runMailauthChecks(bytesToCheck(message), { ...options, resolver: zoneResolver().resolver }, new SpfVerdictCache());
      const theirs = await authenticate(message, { ...options, resolver: zoneResolver().resolver, strict: true, disableBimi: true });
      const auth = mapMailauthResult(ours);
      expect(auth, name).toEqual(mapMailauthResult(theirs));
      expect(authenticationResultsHeader('mx.tempinbox.test', ours, auth), name).toBe(authenticationResultsHeader('mx.tempinbox.test', theirs, auth));
      // SPF passes for example.org from 192.0.2.7; only a From of one author lets DMARC use it.
      if (name.startsWith('two') || name.startsWith('no From')) expect(auth.dmarc, name).toEqual({ result: 'permerror', domain: '', policy: null });
    }
  });
});

describe('bytesToCheck', () => {
  it('is the header section alone for an unsigned message, and the whole message when a signature or an ARC set needs the body', async () => {
    const header = 'From: alice@example.org\r\nSubject: hi\r\n\r\n';
    expect(bytesToCheck(Buffer.from(`${header}body\r\nDKIM-Signature: not a field here\r\n`)).toString()).toBe(header);
    expect(bytesToCheck(Buffer.from('From: a@example.org\n\nbody\n')).toString()).toBe('From: a@example.org\n\n');
    const fullOnes = [
      await signed(),
      Buffer.from(`dkim-signature: v=1\r\n${header}body\r\n`),
      Buffer.from(`ARC-Seal: i=1\r\n${header}body\r\n`),
      Buffer.from('From: a@example.org\r\nno blank line, all header'),
      Buffer.from('\r\nno header at all\r\n'),
    ];
    for (const message of fullOnes) expect(bytesToCheck(message)).toBe(message);
  });
});

describe('scanHeader', () => {
  it('names the From and Return-Path lines of an unsigned message, folded ones whole, and nothing for a signed one', async () => {
    const scan = (text: string) => scanHeader(Buffer.from(text)).verdictFields;
    expect(scan('Subject: hi\r\nfrom: a@example.org\r\nTo: b@x.test\r\n\r\nbody\r\n')).toBe('from: a@example.org');
    expect(scan('From\r\n : A\r\n\t<a@example.org>\r\nReturn-Path: <r@example.org>\r\nTo: b\r\n\r\n')).toBe('From\r\n : A\r\n\t<a@example.org>\r\nReturn-Path: <r@example.org>');
    expect(scan('To: b\n\nFrom: in the body\n')).toBe('');
    expect(scanHeader(await signed())).toMatchObject({ signed: true, verdictFields: null });
    // No simple answer: checked afresh every time.
    for (const odd of ['From: a@example.org\r\nno blank line', ' From: a@example.org\r\n\r\n', `From: ${'a'.repeat(MAX_VERDICT_FIELDS_BYTES)}@example.org\r\n\r\n`]) {
      expect(scan(odd), odd.slice(0, 20)).toBeNull();
    }
  });
});

describe('SpfVerdictCache', () => {
  const options = (resolver: MailauthCheckOptions['resolver'], sender = 'alice@example.org') => ({ ip: '192.0.2.7', helo: 'example.org', sender, mta: 'mx.test', resolver, strict: true });

  it('evaluates SPF once per client address, HELO and sender until the verdict expires', async () => {
    let now = 0;
    const cache = new SpfVerdictCache(() => now, 1000, 10);
    const { resolver, questions } = zoneResolver();
    const first = await cache.verdict(options(resolver));
    expect(first.status.result).toBe('pass');
    expect(questions).toEqual(['TXT example.org', 'TXT _spf.example.org']);
    expect(await cache.verdict(options(resolver))).toBe(first);
    expect(questions).toHaveLength(2);
    // Another sender is another verdict (macros may read its local part, the comment names it).
    expect((await cache.verdict(options(resolver, 'bob@example.org'))).status.comment).toContain('bob@example.org');
    expect(questions).toHaveLength(4);
    now = 1000;
    await cache.verdict(options(resolver));
    expect(questions).toHaveLength(6);
  });

  it('never keeps a temperror: the next message evaluates again', async () => {
    const cache = new SpfVerdictCache();
    const { resolver, questions } = zoneResolver(['_spf.example.org']);
    expect((await cache.verdict(options(resolver))).status.result).toBe('temperror');
    expect((await cache.verdict(options(resolver))).status.result).toBe('temperror');
    expect(questions.filter((q) => q === 'TXT _spf.example.org')).toHaveLength(2);
    expect(cache.size).toBe(0);
  });
});
