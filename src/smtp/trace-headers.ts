/** What the receiving server knows of one transaction, for its trace header (RFC 5321 §4.4). */
export interface TraceInfo {
  /** MAIL FROM path; '' for the null sender `<>`. */
  envelopeFrom: string;
  /** The name the client gave in HELO/EHLO. */
  helo: string;
  /** The client's IP address as seen on the socket. */
  clientAddress: string;
  /** Our name, as in the greeting. */
  serverName: string;
  /** RFC 3848 protocol: SMTP (HELO), ESMTP (EHLO), ESMTPS (EHLO and STARTTLS). */
  protocol: string;
  /** One id per transaction. */
  id: string;
  date: Date;
}

/** RFC 5322 §2.1.1: header lines SHOULD stay within 78 characters and MUST within 998. */
const MAX_LINE = 998;
/** A HELO name as RFC 5321 allows it (a domain or an address literal); anything else is not echoed. */
const HELO_NAME = /^[A-Za-z0-9.:_[\]-]{1,255}$/;
/** RFC 3848 with-protocol values we may write. */
const PROTOCOL = /^E?SMTPS?A?$/;

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * The `Return-Path:` and `Received:` lines a receiving MTA prepends (RFC 5321 §4.4), CRLF-ended
 * and folded before `by` and the date:
 *
 *     Return-Path: <sender@example.org>
 *     Received: from client.example ([192.0.2.1])
 *     	by mx.example with ESMTP id 8kq…;
 *     	Mon, 02 Feb 2026 10:00:00 +0000
 *
 * Client-supplied parts are reduced to what their grammar allows, so nothing can end a line.
 */
export function traceHeaders(info: TraceInfo): Buffer {
  // Control characters, space and angle brackets cannot stand in an unquoted path: dropped.
  const sender = [...info.envelopeFrom]
    .filter((char) => char > ' ' && char !== '\x7f' && char !== '<' && char !== '>')
    .join('')
    .slice(0, MAX_LINE - 'Return-Path: <>'.length);
  const helo = HELO_NAME.test(info.helo) ? info.helo : 'unknown';
  const protocol = PROTOCOL.test(info.protocol) ? info.protocol : 'ESMTP';
  const lines = [
    `Return-Path: <${sender}>`,
    `Received: from ${helo} (${addressLiteral(info.clientAddress)})`,
    `\tby ${info.serverName} with ${protocol} id ${info.id};`,
    `\t${rfc5322Date(info.date)}`,
  ];
  return Buffer.from(`${lines.join('\r\n')}\r\n`, 'utf8');
}

/** RFC 5321 §4.1.3 address literal: `[192.0.2.1]`, `[IPv6:2001:db8::1]`; IPv4-mapped as IPv4. */
export function addressLiteral(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped !== null) return `[${mapped[1]}]`;
  const clean = address.replace(/[^0-9A-Fa-f.:]/g, '');
  return clean.includes(':') ? `[IPv6:${clean}]` : `[${clean}]`;
}

/** RFC 5322 §3.3 date-time in UTC: `Mon, 02 Feb 2026 10:00:00 +0000`. */
export function rfc5322Date(date: Date): string {
  const two = (value: number): string => String(value).padStart(2, '0');
  return (
    `${DAYS[date.getUTCDay()]}, ${two(date.getUTCDate())} ${MONTHS[date.getUTCMonth()]} ${date.getUTCFullYear()} ` +
    `${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())} +0000`
  );
}
