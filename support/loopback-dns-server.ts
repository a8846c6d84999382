import { createSocket, type RemoteInfo, type Socket } from 'node:dgram';
import ipaddr from 'ipaddr.js';

/** TXT records by lowercase name: each record is one string (split into 255-byte pieces on the wire). */
export type TxtZone = Record<string, string[]>;

/**
 * Address records by lowercase name: IPv4 literals are answered as A, IPv6 literals as AAAA.
 * Read at every query, so a test can change a name's answer (DNS rebinding) by assigning to it.
 */
export type AddressZone = Record<string, string[]>;

/**
 * A DNS server on loopback UDP: answers TXT from a zone, A and AAAA from an address zone,
 * NXDOMAIN for unknown names. The sender-authentication tests (test/e2e), the webhook guard's
 * tests and the benchmark (bench/, so that MAIL_AUTH=on is measured against real records
 * rather than a resolver that answers nothing) start one and point the service's DNS_SERVERS
 * at it; nothing of it ships in dist/.
 */
export interface LoopbackDnsServer {
  /** `127.0.0.1:<port>`, as DNS_SERVERS takes it. */
  address: string;
  /** The first MAX_KEPT_QUERIES questions received, as `TYPE name`. */
  queries: string[];
  /** Questions received in all (a benchmark asks far more than are kept). */
  readonly queryCount: number;
  close(): Promise<void>;
}

/**
 * Questions kept for inspection: a test asks a handful, a benchmark with a working answer
 * cache a few per minute; past this only the count grows, so a long run without the cache
 * cannot grow the list without bound.
 */
export const MAX_KEPT_QUERIES = 10_000;

const TYPE_A = 1;
const TYPE_TXT = 16;
const TYPE_AAAA = 28;
const TYPE_NAMES: Record<number, string> = { 1: 'A', 2: 'NS', 5: 'CNAME', 12: 'PTR', 15: 'MX', 16: 'TXT', 28: 'AAAA' };

/** The question of a query: the name, its type, and where the question section ends. */
function readQuestion(query: Buffer): { name: string; type: number; end: number } {
  const labels: string[] = [];
  let offset = 12;
  for (;;) {
    const length = query[offset] ?? 0;
    offset += 1;
    if (length === 0) break;
    labels.push(query.subarray(offset, offset + length).toString('latin1'));
    offset += length;
  }
  return { name: labels.join('.').toLowerCase(), type: query.readUInt16BE(offset), end: offset + 4 };
}

/** One TXT record's RDATA: character-strings of at most 255 bytes (RFC 1035 §3.3.14). */
function txtRdata(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  const parts: Buffer[] = [];
  for (let i = 0; i < bytes.length || i === 0; i += 255) {
    const piece = bytes.subarray(i, i + 255);
    parts.push(Buffer.from([piece.length]), piece);
  }
  return Buffer.concat(parts);
}

/** One resource record: its type and RDATA. */
interface Answer {
  type: number;
  rdata: Buffer;
  ttl: number;
}

/**
 * The records of `name` and `type`. Address records carry TTL 0 (RFC 1035 §3.2.1: not to be
 * cached), so a resolver asks again each time and a test that changes an answer sees it.
 */
function recordsOf(name: string, type: number, zone: TxtZone, addresses: AddressZone): Answer[] {
  if (type === TYPE_TXT) return (zone[name] ?? []).map((text) => ({ type, rdata: txtRdata(text), ttl: 60 }));
  if (type !== TYPE_A && type !== TYPE_AAAA) return [];
  const kind = type === TYPE_A ? 'ipv4' : 'ipv6';
  return (addresses[name] ?? [])
    .map((literal) => ipaddr.parse(literal))
    .filter((address) => address.kind() === kind)
    .map((address) => ({ type, rdata: Buffer.from(address.toByteArray()), ttl: 0 }));
}

/** True when `name` or a name below it is in `zone` (so the name exists: NODATA, not NXDOMAIN). */
function holds(zone: Record<string, string[]>, name: string): boolean {
  return zone[name] !== undefined || Object.keys(zone).some((key) => key.endsWith(`.${name}`));
}

/** The answer to `query` (RFC 1035 §4.1): TXT, A or AAAA records, NODATA, or NXDOMAIN. */
function answer(query: Buffer, zone: TxtZone, addresses: AddressZone): Buffer {
  const { name, type, end } = readQuestion(query);
  const known = holds(zone, name) || holds(addresses, name);
  const answers = recordsOf(name, type, zone, addresses);
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2); // id
  const rd = (query[2] ?? 0) & 0x01;
  header[2] = 0x84 | rd; // QR, AA, RD copied
  header[3] = 0x80 | (known ? 0 : 3); // RA; NOERROR or NXDOMAIN
  header.writeUInt16BE(1, 4);
  header.writeUInt16BE(answers.length, 6);
  const body = answers.map(({ type: rrType, rdata, ttl }) => {
    const rr = Buffer.alloc(12);
    rr.writeUInt16BE(0xc00c, 0); // pointer to the question's name
    rr.writeUInt16BE(rrType, 2);
    rr.writeUInt16BE(1, 4); // IN
    rr.writeUInt32BE(ttl, 6);
    rr.writeUInt16BE(rdata.length, 10);
    return Buffer.concat([rr, rdata]);
  });
  return Buffer.concat([header, query.subarray(12, end), ...body]);
}

/**
 * Starts a DNS server on 127.0.0.1 (a free UDP port). `silent`: it reads every query and
 * never answers (a dead resolver). `addresses`: the A and AAAA records, read at each query.
 */
export async function startLoopbackDnsServer(
  zone: TxtZone,
  options: { silent?: boolean; addresses?: AddressZone } = {},
): Promise<LoopbackDnsServer> {
  const addresses = options.addresses ?? {};
  const socket: Socket = createSocket('udp4');
  const queries: string[] = [];
  let queryCount = 0;
  let closing: Promise<void> | undefined;
  socket.on('message', (query: Buffer, peer: RemoteInfo) => {
    try {
      const { name, type } = readQuestion(query);
      queryCount += 1;
      if (queries.length < MAX_KEPT_QUERIES) queries.push(`${TYPE_NAMES[type] ?? type} ${name}`);
      if (options.silent === true) return;
      socket.send(answer(query, zone, addresses), peer.port, peer.address);
    } catch {
      // A malformed query: no answer, as a real server would drop it.
    }
  });
  await new Promise<void>((done) => socket.bind(0, '127.0.0.1', done));
  return {
    address: `127.0.0.1:${socket.address().port}`,
    queries,
    get queryCount() {
      return queryCount;
    },
    // Idempotent: a benchmark's cleanup may stop a service (and so its DNS server) twice.
    close: () => (closing ??= new Promise<void>((done) => socket.close(() => done()))),
  };
}
