import { generateKeyPairSync } from 'node:crypto';
import nodemailer from 'nodemailer';
import type { TxtZone } from '../support/loopback-dns-server.js';

/**
 * The domain every benchmark message comes from: smtp-source's envelope sender (`-f`), HELO
 * name (`-M`) and From header are in it, and the loopback DNS server each benchmarked service
 * asks (bench/service-process.ts) publishes its SPF, DKIM and DMARC records.
 */
export const BENCH_SENDER_DOMAIN = 'bench.example';
/** The envelope sender and From address of the benchmark's messages. */
export const BENCH_SENDER = `sender@${BENCH_SENDER_DOMAIN}`;
/** The DKIM selector of the signed benchmark messages. */
const SELECTOR = 'bench2026';

/**
 * The sender's throwaway DKIM key, 2048 bits as real senders use (1024 is the minimum
 * mailauth accepts and is being retired); made once per benchmark process, so the key in
 * the zone and the key that signs always match.
 */
const KEY = generateKeyPairSync('rsa', { modulusLength: 2048 });

/**
 * The sender's records as a real bulk sender publishes them: SPF through one include (what
 * ESP-hosted SPF looks like) that allows the loopback client, a 2048-bit DKIM key, and a
 * DMARC record with a report address. Everything else is NXDOMAIN, as for an unknown name.
 */
export function benchSenderZone(): TxtZone {
  const publicKey = KEY.publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  return {
    [BENCH_SENDER_DOMAIN]: [`v=spf1 include:_spf.${BENCH_SENDER_DOMAIN} -all`],
    [`_spf.${BENCH_SENDER_DOMAIN}`]: ['v=spf1 ip4:127.0.0.0/8 ip6:::1 -all'],
    [`${SELECTOR}._domainkey.${BENCH_SENDER_DOMAIN}`]: [`v=DKIM1; k=rsa; p=${publicKey}`],
    [`_dmarc.${BENCH_SENDER_DOMAIN}`]: [`v=DMARC1; p=quarantine; rua=mailto:dmarc@${BENCH_SENDER_DOMAIN}`],
  };
}

/**
 * A DKIM-signed message (relaxed/relaxed, rsa-sha256, nodemailer's signer) of about `size`
 * bytes of text, LF-ended as smtp-source's `-F` wants it (it sends each line with CRLF, which
 * is the form the signature covers).
 */
export async function signedBenchMessage(recipient: string, size: number): Promise<Buffer> {
  const line = 'The quick brown fox jumps over the lazy dog, and your code is 482913.\n';
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true });
  const info = await transport.sendMail({
    from: BENCH_SENDER,
    to: recipient,
    subject: 'tempinbox benchmark, signed',
    text: line.repeat(Math.max(1, Math.round(size / line.length))),
    dkim: { domainName: BENCH_SENDER_DOMAIN, keySelector: SELECTOR, privateKey: KEY.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string },
  });
  // nodemailer writes CRLF whatever its newline option says once it signs.
  return Buffer.from((info.message as Buffer).toString('latin1').replace(/\r\n/g, '\n'), 'latin1');
}
