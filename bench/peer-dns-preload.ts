/**
 * Preloaded into a peer server the benchmark starts (`node --import ./bench/peer-dns-preload.ts`,
 * Node's own type stripping: no imports of ours here). Points node:dns at the loopback DNS
 * server named by $BENCH_DNS_SERVER, so that the peer's DNS questions (MailDev's smtp-server
 * reverse-resolves every client) go to the benchmark's own server on loopback and never to
 * the machine's resolver. Without the variable the process stops: the benchmark sends no
 * packet beyond loopback.
 */
import { setServers } from 'node:dns';

const server = process.env.BENCH_DNS_SERVER;
if (server === undefined || !server.startsWith('127.')) {
  throw new Error('BENCH_DNS_SERVER must name a loopback DNS server (127.x.y.z:port)');
}
setServers([server]);
