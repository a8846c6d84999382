/**
 * Keys of per-client limits (docs/api.md "Fair use" and "SMTP"). One client is one IPv4
 * address or one IPv6 /64: providers hand a whole /64 to one customer (RFC 6177), so keying
 * IPv6 on the full address would give one client 2^64 budgets. The network of a client is
 * its IPv4 /24 or its IPv6 /64, the unit one operator controls.
 */

/** Hextets of an IPv6 address that name its /64 (the routing prefix and subnet). */
const IPV6_PREFIX_HEXTETS = 4;
/** Hextets in a whole IPv6 address. */
const IPV6_HEXTETS = 8;
/** The first six hextets of an IPv4-mapped IPv6 address (RFC 4291 §2.5.5.2). */
const MAPPED_PREFIX = [0, 0, 0, 0, 0, 0xffff];

/** The key of one client: its IPv4 address, or its IPv6 /64; anything else as given (lowercased). */
export function clientKey(address: string): string {
  const parsed = parseIp(address);
  if (parsed === null) return address.toLowerCase();
  return parsed.kind === 'ipv4' ? parsed.octets.join('.') : ipv6Prefix(parsed.hextets);
}

/** The network of a client: its IPv4 /24, or its IPv6 /64; anything else as given (lowercased). */
export function clientNetwork(address: string): string {
  const parsed = parseIp(address);
  if (parsed === null) return address.toLowerCase();
  return parsed.kind === 'ipv4' ? `${parsed.octets.slice(0, 3).join('.')}.0/24` : ipv6Prefix(parsed.hextets);
}

type ParsedIp = { kind: 'ipv4'; octets: number[] } | { kind: 'ipv6'; hextets: number[] };

/** IPv4 dotted quad, IPv6 (with `::`, a zone id, an embedded IPv4 tail); mapped IPv6 as IPv4. */
function parseIp(address: string): ParsedIp | null {
  const ipv4 = parseIpv4(address);
  if (ipv4 !== null) return { kind: 'ipv4', octets: ipv4 };
  const hextets = parseIpv6(address.replace(/%.*$/, ''));
  if (hextets === null) return null;
  if (MAPPED_PREFIX.every((value, index) => hextets[index] === value)) {
    const [high = 0, low = 0] = hextets.slice(6);
    return { kind: 'ipv4', octets: [high >> 8, high & 0xff, low >> 8, low & 0xff] };
  }
  return { kind: 'ipv6', hextets };
}

function parseIpv4(text: string): number[] | null {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((part) => /^\d{1,3}$/.test(part))) return null;
  const octets = parts.map(Number);
  return octets.every((octet) => octet <= 255) ? octets : null;
}

function parseIpv6(text: string): number[] | null {
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const head = parseHextets(halves[0] ?? '');
  const tail = halves.length === 2 ? parseHextets(halves[1] ?? '') : [];
  if (head === null || tail === null) return null;
  if (halves.length === 1) return head.length === IPV6_HEXTETS ? head : null;
  const missing = IPV6_HEXTETS - head.length - tail.length;
  if (missing < 1) return null;
  return [...head, ...new Array<number>(missing).fill(0), ...tail];
}

/** Colon-separated hextets; the last may be a dotted IPv4 address (two hextets). */
function parseHextets(text: string): number[] | null {
  if (text === '') return [];
  const parts = text.split(':');
  const hextets: number[] = [];
  for (const [index, part] of parts.entries()) {
    if (index === parts.length - 1 && part.includes('.')) {
      const ipv4 = parseIpv4(part);
      if (ipv4 === null) return null;
      const [a = 0, b = 0, c = 0, d = 0] = ipv4;
      hextets.push((a << 8) | b, (c << 8) | d);
    } else if (/^[0-9a-f]{1,4}$/i.test(part)) {
      hextets.push(Number.parseInt(part, 16));
    } else {
      return null;
    }
  }
  return hextets.length <= IPV6_HEXTETS ? hextets : null;
}

/** `2001:db8:0:1::/64`: the first four hextets in lowercase hex without leading zeros. */
function ipv6Prefix(hextets: number[]): string {
  return `${hextets.slice(0, IPV6_PREFIX_HEXTETS).map((value) => value.toString(16)).join(':')}::/64`;
}
