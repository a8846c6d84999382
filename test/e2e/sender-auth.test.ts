import { generateKeyPairSync } from 'node:crypto';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieClient } from '../helpers/cookie-client.js';
import { startLoopbackDnsServer, type LoopbackDnsServer } from '../../support/loopback-dns-server.js';
import { sendRawSmtp } from '../helpers/send-raw-smtp.js';
import { startServer, tempDataDir, type ServerProcess } from '../helpers/server-process.js';
import { splitTrace } from '../helpers/trace-headers.js';

/**
 * Sender authentication end to end with no network: the started program checks
 * SPF, DKIM, DMARC and ARC against a DNS server of the test's own on loopback
 * (DNS_SERVERS), for messages signed with throwaway keys and sent from different 127.x
 * client addresses; the verdicts are shown in check and detail and recorded in the stored
 * raw message's Authentication-Results header.
 */

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
const PUBLIC_KEY = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
const PRIVATE_KEY = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;

/** 127.0.0.2 is the designated sender of every SPF record below; 127.0.0.3 is not. */
const ALLOWED = '127.0.0.2';
const OTHER = '127.0.0.3';

const ZONE = {
  'signed.test': [`v=spf1 ip4:${ALLOWED} -all`],
  's1._domainkey.signed.test': [`v=DKIM1; k=rsa; p=${PUBLIC_KEY}`],
  '_dmarc.signed.test': ['v=DMARC1; p=reject'],
  'soft.test': [`v=spf1 ip4:${ALLOWED} ~all`],
  'nospf.test': ['some unrelated text record'],
  // Asked only by the cache test, so that what the other tests asked first cannot hide a miss.
  'repeat.test': [`v=spf1 include:_spf.repeat.test -all`],
  '_spf.repeat.test': [`v=spf1 ip4:${ALLOWED} -all`],
  's1._domainkey.repeat.test': [`v=DKIM1; k=rsa; p=${PUBLIC_KEY}`],
  '_dmarc.repeat.test': ['v=DMARC1; p=quarantine'],
};

type Auth = {
  spf: { result: string; domain: string };
  dkim: { result: string; domain: string; selector: string }[];
  dmarc: { result: string; domain: string; policy: string | null };
  arc: { result: string };
};

/** A message signed by nodemailer's DKIM signer (relaxed/relaxed, rsa-sha256), CRLF line ends. */
async function signedMessage(options: { from: string; selector?: string; subject?: string; text?: string; html?: string }): Promise<Buffer> {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  const info = await transport.sendMail({
    from: options.from,
    to: 'placeholder@tempinbox.test',
    subject: options.subject ?? 'Signed',
    text: options.text ?? 'Hello from a signed message.\n',
    html: options.html,
    dkim: { domainName: options.from.split('@')[1] ?? '', keySelector: options.selector ?? 's1', privateKey: PRIVATE_KEY },
  });
  return info.message as Buffer;
}

function unsignedMessage(from: string, body = 'Plain unsigned mail.'): Buffer {
  return Buffer.from(`From: <${from}>\r\nTo: <placeholder@tempinbox.test>\r\nSubject: Unsigned\r\nMessage-ID: <u-${Math.random()}@x.test>\r\n\r\n${body}\r\n`);
}

describe('sender authentication (MAIL_AUTH=on, local DNS server)', () => {
  let dns: LoopbackDnsServer;
  let server: ServerProcess;
  const data = tempDataDir();
  let owner: CookieClient;
  let inbox: { email: string; username: string };

  beforeAll(async () => {
    dns = await startLoopbackDnsServer(ZONE);
    server = await startServer({ DATABASE_URL: data.databaseUrl, RATE_LIMITS: 'off', MAIL_AUTH: 'on', DNS_SERVERS: dns.address, DOMAINS: 'tempinbox.test' });
    owner = new CookieClient(server.baseUrl);
    inbox = (await owner.get('/api/create')).json;
  });
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
    await dns.close();
    data.cleanup();
  });

  /** Sends and returns the new message as check lists it and as the detail shows it. */
  async function deliver(message: Buffer, envelopeFrom: string, localAddress: string): Promise<{ listed: { id: string; auth: Auth }; detail: { auth: Auth } }> {
    const before = new Set<string>((await owner.get(`/api/check/${inbox.username}`)).json.emails.map((m: { id: string }) => m.id));
    expect(await sendRawSmtp(server.smtpPort, envelopeFrom, inbox.email, message, { localAddress, helo: 'client.example' })).toMatch(/^250 /);
    const check = await owner.get(`/api/check/${inbox.username}`);
    const listed = check.json.emails.find((m: { id: string }) => !before.has(m.id));
    expect(listed).toBeDefined();
    const detail = (await owner.get(`/api/messages/${listed.id}`)).json;
    expect(detail.auth).toEqual(listed.auth);
    return { listed, detail };
  }

  it('a valid signature passes DKIM, and DMARC passes through its alignment even when SPF fails', async () => {
    const { listed } = await deliver(await signedMessage({ from: 'alice@signed.test' }), 'alice@signed.test', OTHER);
    expect(listed.auth).toEqual({
      spf: { result: 'fail', domain: 'signed.test' },
      dkim: [{ result: 'pass', domain: 'signed.test', selector: 's1' }],
      dmarc: { result: 'pass', domain: 'signed.test', policy: 'reject' },
      arc: { result: 'none' },
    });
  });

  it('SPF pass from the designated address aligns DMARC without any signature', async () => {
    const { listed } = await deliver(unsignedMessage('alice@signed.test'), 'alice@signed.test', ALLOWED);
    expect(listed.auth.spf).toEqual({ result: 'pass', domain: 'signed.test' });
    expect(listed.auth.dkim).toEqual([]);
    expect(listed.auth.dmarc).toEqual({ result: 'pass', domain: 'signed.test', policy: 'reject' });
  });

  it('a body changed after signing fails DKIM (RFC 6376 §6.1.3)', async () => {
    const signed = await signedMessage({ from: 'alice@signed.test', text: 'Pay 10 EUR.\n' });
    const altered = Buffer.from(signed.toString('latin1').replace('Pay 10 EUR.', 'Pay 99 EUR.'), 'latin1');
    expect(altered.equals(signed)).toBe(false);
    const { listed } = await deliver(altered, 'alice@signed.test', ALLOWED);
    expect(listed.auth.dkim).toEqual([{ result: 'fail', domain: 'signed.test', selector: 's1' }]);
  });

  it('a selector with no key in DNS is permerror (RFC 6376 §6.1.2 PERMFAIL, "no key for signature")', async () => {
    const { listed } = await deliver(await signedMessage({ from: 'alice@signed.test', selector: 'missing' }), 'alice@signed.test', ALLOWED);
    expect(listed.auth.dkim).toEqual([{ result: 'permerror', domain: 'signed.test', selector: 'missing' }]);
  });

  it('a second message from the same sender asks the resolver nothing: DNS answers and the SPF verdict are cached', async () => {
    const before = dns.queryCount;
    const first = await deliver(await signedMessage({ from: 'alice@repeat.test' }), 'alice@repeat.test', ALLOWED);
    const asked = dns.queries.slice(before);
    // SPF with its include, the DKIM key, DMARC (and its tree walk past the domain).
    expect(asked).toEqual(expect.arrayContaining(['TXT repeat.test', 'TXT _spf.repeat.test', 'TXT s1._domainkey.repeat.test', 'TXT _dmarc.repeat.test']));
    const afterFirst = dns.queryCount;
    const second = await deliver(await signedMessage({ from: 'alice@repeat.test', subject: 'Again' }), 'alice@repeat.test', ALLOWED);
    expect(dns.queryCount).toBe(afterFirst);
    expect(second.listed.auth).toEqual(first.listed.auth);
    expect(first.listed.auth).toEqual({
      spf: { result: 'pass', domain: 'repeat.test' },
      dkim: [{ result: 'pass', domain: 'repeat.test', selector: 's1' }],
      dmarc: { result: 'pass', domain: 'repeat.test', policy: 'quarantine' },
      arc: { result: 'none' },
    });
  });

  it('SPF softfail, and none for a domain without an SPF record', async () => {
    const soft = await deliver(unsignedMessage('bob@soft.test'), 'bob@soft.test', OTHER);
    expect(soft.listed.auth.spf).toEqual({ result: 'softfail', domain: 'soft.test' });
    const none = await deliver(unsignedMessage('carol@nospf.test'), 'carol@nospf.test', OTHER);
    expect(none.listed.auth.spf).toEqual({ result: 'none', domain: 'nospf.test' });
    expect(none.listed.auth.dmarc).toEqual({ result: 'none', domain: 'nospf.test', policy: null });
  });

  it('DMARC fail under p=reject is still delivered, with policy "reject" saying what a real mailbox would do', async () => {
    // From signed.test, unsigned, sent by a host SPF does not allow: nothing aligns.
    const { listed } = await deliver(unsignedMessage('mallory@signed.test', 'Please wire money.'), 'mallory@signed.test', OTHER);
    expect(listed.auth).toEqual({
      spf: { result: 'fail', domain: 'signed.test' },
      dkim: [],
      dmarc: { result: 'fail', domain: 'signed.test', policy: 'reject' },
      arc: { result: 'none' },
    });
  });

  it('the stored raw message is the trace lines, then Authentication-Results for these verdicts, then the received bytes unchanged', async () => {
    const message = await signedMessage({ from: 'alice@signed.test', subject: 'Raw check' });
    const { listed } = await deliver(message, 'alice@signed.test', OTHER);
    const raw = Buffer.from(await (await fetch(`${server.baseUrl}/api/messages/${listed.id}/raw`, { headers: { cookie: `tempinbox_session=${owner.cookie('tempinbox_session') ?? ''}` } })).arrayBuffer());
    const { rest } = splitTrace(raw, { envelopeFrom: 'alice@signed.test', helo: 'client.example', client: `[${OTHER}]`, server: 'tempinbox.test', protocol: 'ESMTP' });
    // splitTrace passed over our header: it is what lies between the four trace lines and `rest`.
    let traceEnd = 0;
    for (let i = 0; i < 4; i += 1) traceEnd = raw.indexOf('\r\n', traceEnd) + 2;
    const header = raw.subarray(traceEnd, raw.length - rest.length).toString('latin1');
    expect(header).toMatch(/^Authentication-Results: tempinbox\.test;\r\n dkim=pass header\.d=signed\.test [^\r\n]*header\.s=s1[^\r\n]*;\r\n spf=fail [^\r\n]*;\r\n arc=none[^\r\n]*;\r\n dmarc=pass [^\r\n]*\r\n$/);
    // What was sent, plus the CRLF the SMTP client adds before the final dot when the message has none.
    const sent = message.subarray(-2).toString() === '\r\n' ? message : Buffer.concat([message, Buffer.from('\r\n')]);
    expect(rest.toString('latin1')).toBe(sent.toString('latin1'));
  });
});

describe('a resolver that never answers', () => {
  const TIMEOUT_MS = 1000;
  /** Loaded-machine margin on top of the DNS budget: parsing and storing a small message takes a few ms. */
  const MARGIN_MS = 1500;
  let dns: LoopbackDnsServer;
  let server: ServerProcess;
  const data = tempDataDir();

  beforeAll(async () => {
    dns = await startLoopbackDnsServer({}, { silent: true });
    server = await startServer({ DATABASE_URL: data.databaseUrl, RATE_LIMITS: 'off', MAIL_AUTH: 'on', DNS_SERVERS: dns.address, DNS_TIMEOUT_MS: String(TIMEOUT_MS) });
  });
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
    await dns.close();
    data.cleanup();
  });

  it('gives temperror within the one budget per message (not per look-up), and the message is delivered', async () => {
    const owner = new CookieClient(server.baseUrl);
    const inbox = (await owner.get('/api/create')).json;
    // Signed, so SPF, the DKIM key and DMARC each need a look-up: one budget per look-up would take three.
    const message = await signedMessage({ from: 'alice@signed.test' });
    const started = performance.now();
    const reply = await sendRawSmtp(server.smtpPort, 'alice@signed.test', inbox.email, message, { localAddress: ALLOWED });
    const elapsed = performance.now() - started;
    expect(reply).toMatch(/^250 /);
    expect(elapsed).toBeLessThan(TIMEOUT_MS + MARGIN_MS);
    expect(dns.queries.length).toBeGreaterThan(0);
    const [listed] = (await owner.get(`/api/check/${inbox.username}`)).json.emails;
    expect(listed.auth.spf).toEqual({ result: 'temperror', domain: 'signed.test' });
    expect(listed.auth.dkim).toEqual([{ result: 'temperror', domain: 'signed.test', selector: 's1' }]);
    expect(listed.auth.dmarc.result).toBe('temperror');
  });
});

describe('MAIL_AUTH=off', () => {
  let server: ServerProcess;
  let dns: LoopbackDnsServer;
  const data = tempDataDir();

  beforeAll(async () => {
    dns = await startLoopbackDnsServer(ZONE);
    server = await startServer({ DATABASE_URL: data.databaseUrl, RATE_LIMITS: 'off', MAIL_AUTH: 'off', DNS_SERVERS: dns.address });
  });
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
    await dns.close();
    data.cleanup();
  });

  it('shows auth null, asks no DNS and adds no Authentication-Results header', async () => {
    const owner = new CookieClient(server.baseUrl);
    const inbox = (await owner.get('/api/create')).json;
    const message = await signedMessage({ from: 'alice@signed.test' });
    expect(await sendRawSmtp(server.smtpPort, 'alice@signed.test', inbox.email, message)).toMatch(/^250 /);
    const [listed] = (await owner.get(`/api/check/${inbox.username}`)).json.emails;
    expect(listed.auth).toBeNull();
    expect((await owner.get(`/api/messages/${listed.id}`)).json.auth).toBeNull();
    const raw = (await owner.get(`/api/messages/${listed.id}/raw`)).text;
    expect(raw).not.toMatch(/^Authentication-Results:/im);
    expect(dns.queries).toEqual([]);
  });
});

describe('codes and links over SMTP', () => {
  let server: ServerProcess;
  const data = tempDataDir();

  beforeAll(async () => {
    server = await startServer({ DATABASE_URL: data.databaseUrl, RATE_LIMITS: 'off', MAIL_AUTH: 'off' });
  });
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
    data.cleanup();
  });

  it('a received message shows its codes and links in check and in the detail', async () => {
    const owner = new CookieClient(server.baseUrl);
    const inbox = (await owner.get('/api/create')).json;
    const message = await signedMessage({
      from: 'noreply@signed.test',
      subject: 'Your sign-in code',
      text: 'Your verification code is 482913.\nOr open https://example.com/verify?t=abc\n',
      html: '<p>Your verification code is <b>482913</b>.</p><p><a href="https://example.com/verify?t=abc">Verify my address</a> · <a href="javascript:alert(1)">bad</a> · <a href="https://example.com/help">Help</a></p>',
    });
    expect(await sendRawSmtp(server.smtpPort, 'noreply@signed.test', inbox.email, message)).toMatch(/^250 /);
    const [listed] = (await owner.get(`/api/check/${inbox.username}`)).json.emails;
    const expected = {
      codes: ['482913'],
      links: [
        { url: 'https://example.com/verify?t=abc', text: 'Verify my address' },
        { url: 'https://example.com/help', text: 'Help' },
      ],
    };
    expect(listed).toMatchObject(expected);
    expect((await owner.get(`/api/messages/${listed.id}`)).json).toMatchObject(expected);
  });
});
