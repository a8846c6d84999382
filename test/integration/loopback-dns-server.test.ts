import { Resolver } from 'node:dns/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLoopbackDnsServer, type AddressZone, type LoopbackDnsServer } from '../../support/loopback-dns-server.js';

/**
 * The test resolver itself, asked by node:dns as the service asks it: TXT for the sender
 * checks, A and AAAA for the webhook guard, and answers that change while it runs.
 */
describe('loopback DNS server', () => {
  const addresses: AddressZone = { 'hook.test': ['127.0.0.1', '::1'], 'v4only.test': ['10.0.0.1', '10.0.0.2'] };
  let dns: LoopbackDnsServer;
  let resolver: Resolver;

  beforeAll(async () => {
    dns = await startLoopbackDnsServer({ 'example.test': ['v=spf1 -all'], '_dmarc.deep.example.test': ['v=DMARC1; p=none'] }, { addresses });
    resolver = new Resolver({ timeout: 1000, tries: 1 });
    resolver.setServers([dns.address]);
  });
  afterAll(() => dns.close());

  it('answers TXT as before', async () => {
    expect(await resolver.resolveTxt('example.test')).toEqual([['v=spf1 -all']]);
    await expect(resolver.resolveTxt('nothing.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    // A name with records below it exists: NODATA, not NXDOMAIN.
    await expect(resolver.resolveTxt('deep.example.test')).rejects.toMatchObject({ code: 'ENODATA' });
  });

  it('answers A with the IPv4 and AAAA with the IPv6 addresses of a name', async () => {
    expect(await resolver.resolve4('hook.test')).toEqual(['127.0.0.1']);
    expect(await resolver.resolve6('hook.test')).toEqual(['::1']);
    expect((await resolver.resolve4('v4only.test')).sort()).toEqual(['10.0.0.1', '10.0.0.2']);
    await expect(resolver.resolve6('v4only.test')).rejects.toMatchObject({ code: 'ENODATA' });
    await expect(resolver.resolve4('example.test')).rejects.toMatchObject({ code: 'ENODATA' });
    await expect(resolver.resolve4('unknown.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  it('gives the new answer once a test changes it (no caching: TTL 0)', async () => {
    addresses['moving.test'] = ['93.184.216.34'];
    expect(await resolver.resolve4('moving.test')).toEqual(['93.184.216.34']);
    addresses['moving.test'] = ['127.0.0.1'];
    expect(await resolver.resolve4('moving.test')).toEqual(['127.0.0.1']);
    expect(dns.queries.filter((query) => query === 'A moving.test')).toHaveLength(2);
  });
});
