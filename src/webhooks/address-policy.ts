import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * Where an address points, when it is not public unicast: ipaddr.js's range names
 * (`loopback`, `private`, `linkLocal`, `carrierGradeNat`, `uniqueLocal`, `multicast`,
 * `unspecified`, `broadcast`, `reserved`, …) and `nat64Local` for the local-use NAT64 prefix.
 */
export type AddressVerdict = { allowed: true } | { allowed: false; range: string; embedded?: string };

/**
 * The whole IPv6 global unicast space (RFC 4291 §2.4, IANA's allocation). ipaddr.js calls
 * every address it has no name for `unicast`, also the deprecated IPv4-compatible `::a.b.c.d`
 * and the unassigned rest of `::/3`; only addresses in `2000::/3` reach the public Internet.
 */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/** The well-known NAT64 prefix (RFC 6052 §2.1): a gateway reaches the IPv4 address in the last 32 bits. */
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');

/** The networks of WEBHOOK_ALLOWED_NETWORKS, parsed once. */
export type AllowedNetworks = readonly (readonly [Address, number])[];

/** Parses CIDRs the configuration already checked (`127.0.0.0/8`, `fd00::/8`). */
export function parseAllowedNetworks(cidrs: readonly string[] | undefined): AllowedNetworks {
  return (cidrs ?? []).map((cidr) => ipaddr.parseCIDR(cidr));
}

/** The IPv4 address in two 16-bit groups of an IPv6 address. */
function ipv4From(high: number, low: number): ipaddr.IPv4 {
  return new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
}

/**
 * The IPv4 addresses an IPv6 address carries to its destination, by the form that embeds
 * them: mapped `::ffff:a.b.c.d` (RFC 4291 §2.5.5.2) and translated `::ffff:0:a.b.c.d`
 * (RFC 6145) are the IPv4 host itself; the NAT64 prefix `64:ff9b::/96` (RFC 6052) is
 * translated to it by a gateway; 6to4 `2002:AABB:CCDD::/48` (RFC 3056) is tunnelled to the
 * IPv4 relay it names; Teredo `2001:0::/32` (RFC 4380 §4) names its server and, inverted, the
 * client's public address. Null when the form embeds none.
 */
function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4[] | null {
  const p = address.parts;
  switch (address.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return [ipv4From(p[6] ?? 0, p[7] ?? 0)];
    case 'rfc6052':
      return address.match(NAT64_WELL_KNOWN) ? [ipv4From(p[6] ?? 0, p[7] ?? 0)] : null;
    case '6to4':
      return [ipv4From(p[1] ?? 0, p[2] ?? 0)];
    case 'teredo':
      return [ipv4From(p[2] ?? 0, p[3] ?? 0), ipv4From(~(p[6] ?? 0) & 0xffff, ~(p[7] ?? 0) & 0xffff)];
    default:
      return null;
  }
}

/** Whether an IPv4 address is public unicast: nothing ipaddr.js names special. */
function ipv4Verdict(address: ipaddr.IPv4): AddressVerdict {
  const range = address.range();
  return range === 'unicast' ? { allowed: true } : { allowed: false, range };
}

/**
 * Whether an IPv6 address is public unicast. Forms that carry an IPv4 address are judged by
 * it (every carried address must be public); `64:ff9b:1::/48`, the local-use NAT64 prefix
 * (RFC 8215), is an operator's own network whose IPv4 position its prefix length decides, so
 * it is refused as a whole.
 */
function ipv6Verdict(address: ipaddr.IPv6): AddressVerdict {
  const range = address.range();
  const carried = embeddedIpv4(address);
  if (carried !== null) {
    for (const ipv4 of carried) {
      const verdict = ipv4Verdict(ipv4);
      if (!verdict.allowed) return { allowed: false, range: verdict.range, embedded: range };
    }
    return { allowed: true };
  }
  if (range === 'rfc6052') return { allowed: false, range: 'nat64Local' };
  if (range !== 'unicast') return { allowed: false, range };
  return address.match(GLOBAL_UNICAST_V6) ? { allowed: true } : { allowed: false, range: 'reserved' };
}

/**
 * True when an allowed network holds the address, or, for an IPv4-mapped or -translated IPv6
 * address, the IPv4 address it is (the same host, so the same rule).
 */
function inAllowedNetwork(address: Address, allowed: AllowedNetworks): boolean {
  const forms: Address[] = [address];
  if (address.kind() === 'ipv6') {
    const v6 = address as ipaddr.IPv6;
    const range = v6.range();
    if (range === 'ipv4Mapped' || range === 'rfc6145') forms.push(ipv4From(v6.parts[6] ?? 0, v6.parts[7] ?? 0));
  }
  return forms.some((form) => allowed.some(([network, prefix]) => network.kind() === form.kind() && form.match(network, prefix)));
}

/**
 * An address in its usual text form: IPv4 as four decimal parts (ipaddr.js's general parser
 * would also read `0127.0.0.1` as octal, a spelling neither DNS nor the URL parser gives), or
 * IPv6. Null for anything else.
 */
function parseAddress(literal: string): Address | null {
  if (ipaddr.IPv4.isValidFourPartDecimal(literal)) return ipaddr.IPv4.parse(literal);
  if (ipaddr.IPv6.isValid(literal)) return ipaddr.IPv6.parse(literal);
  return null;
}

/** True when `host` (a URL's host name, IPv6 without brackets) is an IP address rather than a name. */
export function isAddressLiteral(host: string): boolean {
  return parseAddress(host) !== null;
}

/**
 * Whether a webhook may connect to `literal` (an IP address): inside WEBHOOK_ALLOWED_NETWORKS,
 * or public unicast, judged also by every IPv4 address an IPv6 form carries. Documentation,
 * benchmarking and other special-purpose ranges count as not public; so does anything that is
 * not an address (`reserved`).
 */
export function classifyAddress(literal: string, allowed: AllowedNetworks = []): AddressVerdict {
  const address = parseAddress(literal);
  if (address === null) return { allowed: false, range: 'reserved' };
  if (inAllowedNetwork(address, allowed)) return { allowed: true };
  return address.kind() === 'ipv4' ? ipv4Verdict(address as ipaddr.IPv4) : ipv6Verdict(address as ipaddr.IPv6);
}

/** A refused range in words, for the error a user reads ("… resolves to a loopback address"). */
const RANGE_WORDS: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private (RFC 1918) address',
  uniqueLocal: 'a unique local (fc00::/7) address',
  linkLocal: 'a link-local address',
  carrierGradeNat: 'a shared (100.64.0.0/10) address',
  unspecified: 'an unspecified address',
  multicast: 'a multicast address',
  broadcast: 'the broadcast address',
  nat64Local: 'a local-use NAT64 address',
};

/** The IPv6 forms that carry an IPv4 address, in words. */
const CARRIER_WORDS: Record<string, string> = {
  ipv4Mapped: 'an IPv4-mapped',
  rfc6145: 'an IPv4-translated',
  rfc6052: 'a NAT64',
  '6to4': 'a 6to4',
  teredo: 'a Teredo',
};

/** "a loopback address", "a private (RFC 1918) address inside an IPv4-mapped IPv6 address", … */
export function describeRefusal(verdict: { range: string; embedded?: string }): string {
  const words = RANGE_WORDS[verdict.range] ?? 'a reserved or special-purpose address';
  if (verdict.embedded === undefined) return words;
  return `${words} inside ${CARRIER_WORDS[verdict.embedded] ?? 'an'} IPv6 address`;
}
