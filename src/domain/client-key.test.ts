import { describe, expect, it } from 'vitest';
import { clientKey, clientNetwork } from './client-key.js';

describe('clientKey: the per-client key of fair-use limits', () => {
  it('keys IPv4 on the whole address', () => {
    expect(clientKey('203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('203.0.113.8')).not.toBe(clientKey('203.0.113.7'));
  });

  it('keys IPv6 on its /64, whatever the interface identifier or its spelling', () => {
    const key = clientKey('2001:db8:aa:bb::1');
    expect(key).toBe('2001:db8:aa:bb::/64');
    expect(clientKey('2001:0DB8:00aa:00bb:ffff:ffff:ffff:fffe')).toBe(key);
    expect(clientKey('2001:db8:aa:bb:1:2:3:4%eth0')).toBe(key);
    expect(clientKey('2001:db8:aa:bc::1')).not.toBe(key);
  });

  it('expands :: wherever it stands', () => {
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    expect(clientKey('fe80::')).toBe('fe80:0:0:0::/64');
    expect(clientKey('2001:db8::7:8')).toBe('2001:db8:0:0::/64');
    expect(clientKey('1:2:3:4:5:6:7::')).toBe('1:2:3:4::/64');
  });

  it('keys an IPv4-mapped IPv6 address as the IPv4 address it carries', () => {
    expect(clientKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('::FFFF:cb00:7107')).toBe('203.0.113.7');
    expect(clientKey('0:0:0:0:0:ffff:203.0.113.7')).toBe('203.0.113.7');
  });

  it('keeps anything that is not an IP address as it is (lowercased), never throws', () => {
    for (const odd of ['', 'unknown', '1.2.3', '1.2.3.256', '1::2::3', '1:2:3:4:5:6:7:8:9', 'g::1', '::ffff:1.2.3']) {
      expect(clientKey(odd)).toBe(odd.toLowerCase());
    }
  });
});

describe('clientNetwork: the network a client belongs to', () => {
  it('is the /24 for IPv4 (also when IPv4-mapped)', () => {
    expect(clientNetwork('198.51.100.23')).toBe('198.51.100.0/24');
    expect(clientNetwork('198.51.100.250')).toBe('198.51.100.0/24');
    expect(clientNetwork('::ffff:198.51.100.23')).toBe('198.51.100.0/24');
    expect(clientNetwork('198.51.101.23')).not.toBe(clientNetwork('198.51.100.23'));
  });

  it('is the /64 for IPv6, the same as its clientKey', () => {
    expect(clientNetwork('2001:db8:aa:bb::99')).toBe('2001:db8:aa:bb::/64');
    expect(clientNetwork('2001:db8:aa:bb::99')).toBe(clientKey('2001:db8:aa:bb::1'));
  });
});
