import { describe, expect, it } from 'vitest';
import { classifyAddress, describeRefusal, isAddressLiteral, parseAllowedNetworks } from './address-policy.js';

describe('classifyAddress: only public unicast passes', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.254', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'], // the cloud metadata address
    ['169.254.0.1', 'linkLocal'],
    ['fe80::1', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['100.127.255.255', 'carrierGradeNat'],
    ['fc00::1', 'uniqueLocal'],
    ['fd12:3456::1', 'uniqueLocal'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['ff02::1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    // Documentation ranges (RFC 5737, RFC 3849, RFC 9637) are not destinations anyone runs.
    ['192.0.2.1', 'reserved'],
    ['198.51.100.7', 'reserved'],
    ['203.0.113.9', 'reserved'],
    ['2001:db8::1', 'reserved'],
    ['3fff::1', 'reserved'],
    ['198.18.0.1', 'reserved'], // benchmarking (RFC 2544)
    ['192.0.0.8', 'reserved'], // IETF protocol assignments
    ['100::1', 'discard'],
    ['fec0::1', 'deprecatedSiteLocal'],
    ['5f00::1', 'segmentRouting'],
    // ipaddr.js calls these "unicast"; outside 2000::/3 nothing is publicly routed.
    ['::7f00:1', 'reserved'], // IPv4-compatible ::127.0.0.1 (deprecated)
    ['4000::1', 'reserved'],
  ])('refuses %s as %s', (address, range) => {
    expect(classifyAddress(address)).toEqual({ allowed: false, range });
  });

  it.each([
    ['::ffff:127.0.0.1', 'loopback', 'ipv4Mapped'],
    ['::ffff:7f00:1', 'loopback', 'ipv4Mapped'],
    ['::ffff:169.254.169.254', 'linkLocal', 'ipv4Mapped'],
    ['::ffff:10.0.0.1', 'private', 'ipv4Mapped'],
    ['::ffff:0:127.0.0.1', 'loopback', 'rfc6145'],
    ['64:ff9b::7f00:1', 'loopback', 'rfc6052'], // NAT64 of 127.0.0.1
    ['64:ff9b::a9fe:a9fe', 'linkLocal', 'rfc6052'], // NAT64 of 169.254.169.254
    ['64:ff9b::c0a8:101', 'private', 'rfc6052'],
    ['2002:7f00:1::1', 'loopback', '6to4'], // 6to4 relay 127.0.0.1
    ['2002:a00:1::', 'private', '6to4'],
    ['2001:0:7f00:1::1', 'loopback', 'teredo'], // Teredo server 127.0.0.1
    // Teredo client 10.0.0.1, stored inverted: ~0a00:0001 = f5ff:fffe.
    ['2001:0:5db8:d822:0:0:f5ff:fffe', 'private', 'teredo'],
  ])('refuses %s, which carries a %s IPv4 address (%s)', (address, range, embedded) => {
    expect(classifyAddress(address)).toEqual({ allowed: false, range, embedded });
  });

  it('refuses the local-use NAT64 prefix as a whole', () => {
    expect(classifyAddress('64:ff9b:1::5db8:d822')).toEqual({ allowed: false, range: 'nat64Local' });
  });

  it.each([
    '93.184.216.34',
    '1.1.1.1',
    '8.8.8.8',
    '2606:2800::1',
    '2a00:1450:4001::200e',
    '::ffff:93.184.216.34', // the IPv4 host itself
    '64:ff9b::5db8:d822', // NAT64 of 93.184.216.34
    '2002:5db8:d822::1', // 6to4 relay 93.184.216.34
    '2001:0:5db8:d822:0:0:a247:bef5', // Teredo server 93.184.216.34, client 93.184.65.10
  ])('lets public unicast %s through', (address) => {
    expect(classifyAddress(address)).toEqual({ allowed: true });
  });

  it.each(['hook.test', '0127.0.0.1', '127.1', '0x7f000001', '', '1.2.3.4.5', '::ffff::1'])('refuses %j, which is not an address in usual form', (literal) => {
    expect(classifyAddress(literal)).toEqual({ allowed: false, range: 'reserved' });
  });
});

describe('classifyAddress with WEBHOOK_ALLOWED_NETWORKS', () => {
  const allowed = parseAllowedNetworks(['127.0.0.0/8', '10.20.0.0/16', 'fd00:1::/32']);

  it('lets an address inside an allowed network through, and only that network', () => {
    expect(classifyAddress('127.0.0.1', allowed)).toEqual({ allowed: true });
    expect(classifyAddress('127.9.9.9', allowed)).toEqual({ allowed: true });
    expect(classifyAddress('10.20.3.4', allowed)).toEqual({ allowed: true });
    expect(classifyAddress('fd00:1::5', allowed)).toEqual({ allowed: true });
    expect(classifyAddress('10.21.0.1', allowed)).toEqual({ allowed: false, range: 'private' });
    expect(classifyAddress('fd00:2::5', allowed)).toEqual({ allowed: false, range: 'uniqueLocal' });
    expect(classifyAddress('169.254.169.254', allowed)).toEqual({ allowed: false, range: 'linkLocal' });
    expect(classifyAddress('::1', allowed)).toEqual({ allowed: false, range: 'loopback' });
  });

  it('treats an IPv4-mapped address as the IPv4 host it is, but not a NAT64 or 6to4 one', () => {
    expect(classifyAddress('::ffff:127.0.0.1', allowed)).toEqual({ allowed: true });
    expect(classifyAddress('64:ff9b::7f00:1', allowed)).toEqual({ allowed: false, range: 'loopback', embedded: 'rfc6052' });
    expect(classifyAddress('64:ff9b::7f00:1', parseAllowedNetworks(['64:ff9b::/96']))).toEqual({ allowed: true });
  });

  it('keeps public addresses public', () => {
    expect(classifyAddress('93.184.216.34', allowed)).toEqual({ allowed: true });
    expect(parseAllowedNetworks(undefined)).toEqual([]);
  });
});

describe('isAddressLiteral and describeRefusal', () => {
  it('tells address literals from names', () => {
    expect(['127.0.0.1', '::1', '2606:2800::1', '::ffff:7f00:1'].every(isAddressLiteral)).toBe(true);
    expect(['hook.test', 'localhost', '127.0.0.1.nip.io', '1.2.3'].some(isAddressLiteral)).toBe(false);
  });

  it('says what was refused in words', () => {
    expect(describeRefusal({ range: 'loopback' })).toBe('a loopback address');
    expect(describeRefusal({ range: 'linkLocal', embedded: 'rfc6052' })).toBe('a link-local address inside a NAT64 IPv6 address');
    expect(describeRefusal({ range: 'private', embedded: 'ipv4Mapped' })).toBe('a private (RFC 1918) address inside an IPv4-mapped IPv6 address');
    expect(describeRefusal({ range: 'segmentRouting' })).toBe('a reserved or special-purpose address');
  });
});
