import { describe, expect, it, onTestFinished } from 'vitest';
import { startLoopbackDnsServer } from '../../support/loopback-dns-server.js';
import { buildTestApp } from '../helpers/build-test-app.js';
import { postgresAvailable } from '../helpers/postgres-test-database.js';
import { sendRawSmtp } from '../helpers/send-raw-smtp.js';
import { splitTrace } from '../helpers/trace-headers.js';

/**
 * The stored message is built in the room the listener leaves in front of the received bytes
 * (docs/architecture.md "One copy of each message's bytes"). What is stored must be exactly
 * the trace lines, our Authentication-Results header and the bytes received, for a message
 * larger than one socket read (several DATA chunks) whose body is not UTF-8.
 */

/** The served domain, which the MX names itself by in its trace lines and header. */
const SERVER = 'tempinbox.test';

/** Over 64 KiB, so smtp-server hands DATA over in several chunks. */
const BODY_LINES = 1_200;

/** Every byte value but CR and LF (NUL and 0x80-0xff included), 76 to a line, CRLF-ended. */
function binaryMessage(to: string): Buffer {
  const values = Array.from({ length: 256 }, (_, i) => i).filter((value) => value !== 0x0d && value !== 0x0a);
  const lines: Buffer[] = [Buffer.from(`From: sender@example.org\r\nTo: ${to}\r\nSubject: binary\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: binary\r\n\r\n`, 'latin1')];
  for (let line = 0; line < BODY_LINES; line += 1) {
    lines.push(Buffer.from(Array.from({ length: 76 }, (_, i) => values[(line * 76 + i) % values.length] ?? 0)), Buffer.from('\r\n'));
  }
  return Buffer.concat(lines);
}

const postgres = await postgresAvailable('stored bytes on PostgreSQL');
const stores: Array<{ name: string; store: 'sqlite' | 'postgres'; skip: boolean }> = [
  { name: 'SQLite', store: 'sqlite', skip: false },
  { name: 'PostgreSQL', store: 'postgres', skip: !postgres },
];

describe.each(stores)('stored raw bytes on $name', ({ store, skip }) => {
  it.skipIf(skip)('are the trace lines, the Authentication-Results header and the received bytes, exactly', async () => {
    // No records: the checks run (and write their header) and find nothing, at once.
    const dns = await startLoopbackDnsServer({});
    onTestFinished(() => dns.close());
    const { app, smtpPort, newInbox } = await buildTestApp({ store, env: { MAIL_AUTH: 'on', DNS_SERVERS: dns.address, DOMAINS: SERVER } });
    const { cookie, email } = await newInbox();
    const sent = binaryMessage(email);
    expect(sent.byteLength).toBeGreaterThan(64 * 1024);
    expect(await sendRawSmtp(smtpPort, 'sender@example.org', email, sent, { helo: 'client.example' })).toMatch(/^250 /);

    const check = await app.http.inject({ method: 'GET', url: `/api/check/${email}`, headers: { cookie } });
    const [listed] = check.json().emails as Array<{ id: string }>;
    const raw = await app.http.inject({ method: 'GET', url: `/api/messages/${listed?.id ?? ''}/raw`, headers: { cookie } });
    expect(raw.statusCode).toBe(200);
    const stored = raw.rawPayload;
    const { rest } = splitTrace(stored, { envelopeFrom: 'sender@example.org', helo: 'client.example', client: '[127.0.0.1]', server: SERVER, protocol: 'ESMTP' });
    const prefix = stored.subarray(0, stored.byteLength - rest.byteLength).toString('latin1');
    expect(prefix).toContain(`\r\nAuthentication-Results: ${SERVER};\r\n `);
    expect(prefix.endsWith('\r\n')).toBe(true);
    expect(Buffer.compare(rest, sent)).toBe(0);
    // The size counted against the quota is the stored message's.
    const detail = await app.http.inject({ method: 'GET', url: `/api/messages/${listed?.id ?? ''}`, headers: { cookie } });
    expect(detail.json().size).toBe(stored.byteLength);
  }, 60_000);
});
