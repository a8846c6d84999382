import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDestinationGuard, DestinationGuard, type GuardVerdict } from '../../src/webhooks/destination-guard.js';
import { dnsHostResolver } from '../../src/webhooks/host-resolver.js';
import { startLoopbackDnsServer, type AddressZone, type LoopbackDnsServer } from '../../support/loopback-dns-server.js';

/**
 * The destination guard against a real resolver on loopback (support/loopback-dns-server.ts)
 * that answers names with the addresses an attacker would use. The guard only resolves and
 * classifies: nothing here connects anywhere, so public answers are safe to test.
 */
describe('destination guard with names resolved over DNS', () => {
  const addresses: AddressZone = {
    'loop4.test': ['127.0.0.1'],
    'loop6.test': ['::1'],
    'ten.test': ['10.1.2.3'],
    'sixteen.test': ['172.16.0.1'],
    'home.test': ['192.168.1.1'],
    'metadata.test': ['169.254.169.254'],
    'cgnat.test': ['100.64.0.1'],
    'ula.test': ['fc00::1'],
    'mapped.test': ['::ffff:127.0.0.1'],
    'nat64.test': ['64:ff9b::7f00:1'],
    'zero.test': ['0.0.0.0'],
    'multicast.test': ['224.0.0.1'],
    'public.test': ['93.184.216.34', '2606:2800::1'],
    // One bad address among good ones is enough to refuse: the connection could pick it.
    'mixed.test': ['93.184.216.34', '10.0.0.1'],
    'mixed6.test': ['93.184.216.34', '::1'],
  };
  let dns: LoopbackDnsServer;
  let silentDns: LoopbackDnsServer;
  let guard: DestinationGuard;

  beforeAll(async () => {
    dns = await startLoopbackDnsServer({ 'txt-only.test': ['v=spf1 -all'] }, { addresses });
    silentDns = await startLoopbackDnsServer({}, { silent: true });
    guard = createDestinationGuard({ webhookAllowedNetworks: undefined, dnsServers: [dns.address], dnsTimeoutMs: 1000 });
  });
  afterAll(async () => {
    await dns.close();
    await silentDns.close();
  });

  function expectForbidden(verdict: GuardVerdict, words: string): void {
    expect(verdict).toMatchObject({ ok: false, code: 'webhook_url_forbidden' });
    if (!verdict.ok) expect(verdict.message).toContain(words);
  }

  it.each([
    ['loop4.test', 'a loopback address'],
    ['loop6.test', 'a loopback address'],
    ['ten.test', 'a private (RFC 1918) address'],
    ['sixteen.test', 'a private (RFC 1918) address'],
    ['home.test', 'a private (RFC 1918) address'],
    ['metadata.test', 'a link-local address'],
    ['cgnat.test', 'a shared (100.64.0.0/10) address'],
    ['ula.test', 'a unique local (fc00::/7) address'],
    ['mapped.test', 'a loopback address inside an IPv4-mapped IPv6 address'],
    ['nat64.test', 'a loopback address inside a NAT64 IPv6 address'],
    ['zero.test', 'an unspecified address'],
    ['multicast.test', 'a multicast address'],
    ['mixed.test', 'a private (RFC 1918) address'],
    ['mixed6.test', 'a loopback address'],
  ])('refuses http://%s/ (it resolves to %s), asking A and AAAA', async (name, words) => {
    const verdict = await guard.check(`http://${name}/hook`);
    expectForbidden(verdict, `resolves to ${words}`);
    expect(dns.queries).toEqual(expect.arrayContaining([`A ${name}`, `AAAA ${name}`]));
    // The answer is not repeated to the user: it could map an internal name for a stranger.
    for (const address of addresses[name] ?? []) expect(verdict.ok ? '' : verdict.message).not.toContain(address);
  });

  it('lets a name that resolves to public addresses only through, with every address, IPv4 first', async () => {
    expect(await guard.check('https://public.test/in')).toMatchObject({
      ok: true,
      destination: { addresses: ['93.184.216.34', '2606:2800::1'], url: { hostname: 'public.test', protocol: 'https:', port: 443 } },
    });
  });

  it.each([
    ['http://127.0.0.1/', 'a loopback address'],
    ['http://[::1]/', 'a loopback address'],
    ['http://10.0.0.1/', 'a private (RFC 1918) address'],
    ['http://169.254.169.254/latest/meta-data/', 'a link-local address'],
    ['http://[::ffff:127.0.0.1]/', 'a loopback address inside an IPv4-mapped IPv6 address'],
    ['http://[64:ff9b::a9fe:a9fe]/', 'a link-local address inside a NAT64 IPv6 address'],
    ['http://0.0.0.0:8080/', 'an unspecified address'],
    ['http://0x7f.1/', 'a loopback address'],
    ['http://2130706433/', 'a loopback address'],
  ])('refuses the literal %s without a look-up', async (url, words) => {
    const before = dns.queryCount;
    expectForbidden(await guard.check(url), `host is ${words}`);
    expect(dns.queryCount).toBe(before);
  });

  it('lets a public literal through without a look-up', async () => {
    const before = dns.queryCount;
    expect(await guard.check('http://93.184.216.34:8080/x')).toMatchObject({ ok: true, destination: { addresses: ['93.184.216.34'] } });
    expect(await guard.check('https://[2606:2800::1]/')).toMatchObject({ ok: true, destination: { addresses: ['2606:2800::1'] } });
    expect(dns.queryCount).toBe(before);
  });

  it('answers invalid_request for a URL against the rules, before any look-up', async () => {
    const before = dns.queryCount;
    for (const url of ['ftp://public.test/', 'https://user:pw@public.test/', 'not a url', `https://public.test/${'a'.repeat(2048)}`]) {
      expect(await guard.check(url)).toMatchObject({ ok: false, code: 'invalid_request' });
    }
    expect(dns.queryCount).toBe(before);
  });

  it('answers invalid_request for a name that does not resolve (NXDOMAIN, or no A or AAAA record)', async () => {
    for (const name of ['nowhere.test', 'txt-only.test']) {
      const verdict = await guard.check(`http://${name}/`);
      expect(verdict).toMatchObject({ ok: false, code: 'invalid_request', message: "The webhook URL's host name does not resolve to any address." });
    }
  });

  it('answers invalid_request, in bounded time, when DNS does not answer', async () => {
    const slowGuard = new DestinationGuard({ resolveHost: dnsHostResolver([silentDns.address], 300) });
    const started = performance.now();
    const verdict = await slowGuard.check('http://public.test/');
    const elapsed = performance.now() - started;
    expect(verdict).toMatchObject({ ok: false, code: 'invalid_request', message: expect.stringContaining('ETIMEOUT') });
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(1500);
    // The attempt's deadline, when sooner, bounds the look-up instead.
    const patientGuard = new DestinationGuard({ resolveHost: dnsHostResolver([silentDns.address], 5000) });
    const early = performance.now();
    expect(await patientGuard.check('http://public.test/', Date.now() + 100)).toMatchObject({ ok: false, code: 'invalid_request' });
    expect(performance.now() - early).toBeLessThan(2000);
  });

  it('lets WEBHOOK_ALLOWED_NETWORKS open exactly the networks it lists', async () => {
    const internal = createDestinationGuard({ webhookAllowedNetworks: ['127.0.0.0/8', 'fc00::/7'], dnsServers: [dns.address], dnsTimeoutMs: 1000 });
    expect(await internal.check('http://loop4.test:8080/')).toMatchObject({ ok: true, destination: { addresses: ['127.0.0.1'] } });
    expect(await internal.check('http://mapped.test/')).toMatchObject({ ok: true, destination: { addresses: ['::ffff:127.0.0.1'] } });
    expect(await internal.check('http://ula.test/')).toMatchObject({ ok: true });
    expect(await internal.check('http://127.0.0.1:9/')).toMatchObject({ ok: true });
    expectForbidden(await internal.check('http://ten.test/'), 'a private (RFC 1918) address');
    expectForbidden(await internal.check('http://metadata.test/'), 'a link-local address');
    expectForbidden(await internal.check('http://loop6.test/'), 'a loopback address');
  });

  it('judges a name by what it resolves to at each check (DNS rebinding is refused at the next one)', async () => {
    addresses['rebind.test'] = ['93.184.216.34'];
    expect(await guard.check('http://rebind.test/')).toMatchObject({ ok: true, destination: { addresses: ['93.184.216.34'] } });
    addresses['rebind.test'] = ['127.0.0.1'];
    expectForbidden(await guard.check('http://rebind.test/'), 'resolves to a loopback address');
    expect(dns.queries.filter((query) => query === 'A rebind.test')).toHaveLength(2);
  });
});
