/**
 * `npx tsx bench/sender-auth.ts [messages]`: what the sender checks (MAIL_AUTH) cost per
 * message (docs/api.md, "Sender authentication"). Needs `npm run build` first.
 *
 * 1. In process: MailauthSenderAuthenticator against a DNS server on loopback, per message
 *    (cold cache and warm), and one 10 MiB signed message: wall time and the longest
 *    event-loop stall while it is checked.
 * 2. End to end: the started program ingests the same signed message over SMTP, one
 *    transaction after another, with MAIL_AUTH=on (DNS_SERVERS = the loopback server) and off.
 */
import { generateKeyPairSync } from 'node:crypto';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import nodemailer from 'nodemailer';
import { MailauthSenderAuthenticator } from '../src/mail-auth/mailauth-sender-authenticator.js';
import { startLoopbackDnsServer } from '../support/loopback-dns-server.js';
import { CookieClient } from '../test/helpers/cookie-client.js';
import { sendRawSmtp } from '../test/helpers/send-raw-smtp.js';
import { startServer, tempDataDir } from '../test/helpers/server-process.js';

const MESSAGES = Number(process.argv[2] ?? 200);
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const zone = {
  'bench.test': ['v=spf1 ip4:127.0.0.1 -all'],
  's1._domainkey.bench.test': [`v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`],
  '_dmarc.bench.test': ['v=DMARC1; p=reject'],
};

async function signed(text: string): Promise<Buffer> {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  const info = await transport.sendMail({
    from: 'alice@bench.test',
    to: 'x@tempinbox.test',
    subject: 'Your code is 482913',
    text,
    dkim: { domainName: 'bench.test', keySelector: 's1', privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string },
  });
  return info.message as Buffer;
}

const percentile = (values: number[], p: number): number => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))] ?? 0;
const fmt = (ms: number): string => `${ms.toFixed(2)} ms`;

const dns = await startLoopbackDnsServer(zone);
const small = await signed('Hello,\n\nyour sign-in code is 482913.\n\nThanks\n'.repeat(20));
const input = { clientAddress: '127.0.0.1', helo: 'client.bench.test', envelopeFrom: 'alice@bench.test' };

// 1. In process.
const cold = new MailauthSenderAuthenticator({ serverName: 'tempinbox.test', dnsTimeoutMs: 3000, dnsServers: [dns.address] });
const t0 = performance.now();
await cold.check({ ...input, message: small });
console.log(`in process, ${small.length} B signed message, cold cache: ${fmt(performance.now() - t0)}`);
const times: number[] = [];
for (let i = 0; i < MESSAGES; i += 1) {
  const start = performance.now();
  await cold.check({ ...input, message: small });
  times.push(performance.now() - start);
}
console.log(`in process, warm cache, ${MESSAGES} messages: mean ${fmt(times.reduce((a, b) => a + b, 0) / times.length)}, p50 ${fmt(percentile(times, 0.5))}, p95 ${fmt(percentile(times, 0.95))}`);

const big = await signed('The quick brown fox jumps over the lazy dog 0123456789 abcdefghijklmnopqrstuvw\n'.repeat(130_000));
const delay = monitorEventLoopDelay({ resolution: 1 });
delay.enable();
// A second, direct reading: the longest gap between 1 ms ticks while the check runs.
let last = performance.now();
let longestGap = 0;
const ticker = setInterval(() => {
  const now = performance.now();
  longestGap = Math.max(longestGap, now - last);
  last = now;
}, 1);
const t1 = performance.now();
const bigResult = await cold.check({ ...input, message: big });
const bigMs = performance.now() - t1;
clearInterval(ticker);
delay.disable();
console.log(
  `in process, ${(big.length / 1048576).toFixed(1)} MiB signed message: ${fmt(bigMs)} (dkim ${bigResult.auth.dkim[0]?.result}), longest event-loop stall ${fmt(delay.max / 1e6)} (histogram), longest gap between 1 ms timer ticks ${fmt(longestGap)}`,
);

// 2. End to end over SMTP.
for (const mailAuth of ['off', 'on']) {
  const data = tempDataDir();
  const server = await startServer({ DATABASE_URL: data.databaseUrl, RATE_LIMITS: 'off', FREE_MAX_MESSAGES: '1000000', FREE_MAX_BYTES: '1099511627776', MAIL_AUTH: mailAuth, DNS_SERVERS: dns.address });
  try {
    const owner = new CookieClient(server.baseUrl);
    const inbox = (await owner.get('/api/create')).json as { email: string };
    const latencies: number[] = [];
    const started = performance.now();
    for (let i = 0; i < MESSAGES; i += 1) {
      const start = performance.now();
      await sendRawSmtp(server.smtpPort, 'alice@bench.test', inbox.email, small);
      latencies.push(performance.now() - start);
    }
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `SMTP ingest MAIL_AUTH=${mailAuth}: ${MESSAGES} messages, ${(MESSAGES / seconds).toFixed(0)} msg/s, per transaction mean ${fmt(latencies.reduce((a, b) => a + b, 0) / latencies.length)}, p95 ${fmt(percentile(latencies, 0.95))}`,
    );
  } finally {
    await server.stop();
    data.cleanup();
  }
}
await dns.close();
