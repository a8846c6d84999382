import { Resolver } from 'node:dns/promises';
import type { DnsLookup } from './dns-answer-cache.js';

/**
 * Asks the resolvers of DNS_SERVERS (or the system's, when none are given) with
 * node:dns's c-ares client: asynchronous, never a thread-pool getaddrinfo that could block
 * other look-ups. One try per server, each bounded by `timeoutMs`; the per-message budget
 * on top of it is DeadlineResolver's.
 */
export function systemDnsLookup(servers: readonly string[] | undefined, timeoutMs: number): DnsLookup {
  const resolver = new Resolver({ timeout: timeoutMs, tries: 1 });
  if (servers !== undefined && servers.length > 0) resolver.setServers([...servers]);
  return (name, rrtype) => resolver.resolve(name, rrtype);
}
