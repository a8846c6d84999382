import { generateKeyPairSync } from 'node:crypto';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLoopbackDnsServer, type LoopbackDnsServer } from '../../support/loopback-dns-server.js';
import { CookieClient } from '../helpers/cookie-client.js';
import { sendRawSmtp } from '../helpers/send-raw-smtp.js';
import { startServer, tempDataDir, type ServerProcess } from '../helpers/server-process.js';

/**
 * Mail that lies about its sender, over real SMTP to the started program with a DNS server of
 * the test's own on loopback (docs/api.md "Sender authentication"): bank.test publishes
 * `p=reject`, evil.test's server (127.0.0.2) is allowed by evil.test's SPF record and signs with
 * evil.test's key. A From field that does not name exactly one author gets DMARC `permerror`,
 * and an `Authentication-Results:` field that came with the message naming our server is renamed
 * (RFC 8601 §5), with the checks on and off.
 */

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
const PUBLIC_KEY = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
const PRIVATE_KEY = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;

/** evil.test's mail server: its SPF record allows this address. */
const EVIL_SERVER = '127.0.0.2';

const ZONE = {
  'bank.test': ['v=spf1 ip4:127.0.0.9 -all'],
  '_dmarc.bank.test': ['v=DMARC1; p=reject'],
  'evil.test': [`v=spf1 ip4:${EVIL_SERVER} -all`],
  's1._domainkey.evil.test': [`v=DKIM1; k=rsa; p=${PUBLIC_KEY}`],
};

type Auth = {
  spf: { result: string; domain: string };
  dkim: { result: string; domain: string; selector: string }[];
  dmarc: { result: string; domain: string; policy: string | null };
  arc: { result: string };
};

/** A message with exactly these header lines (CRLF-ended), then a short body. */
function rawMessage(headers: string[], body = 'Please confirm your account details.'): Buffer {
  return Buffer.from(`${headers.join('\r\n')}\r\nTo: <placeholder@tempinbox.test>\r\nSubject: Account notice\r\nMessage-ID: <m-${Math.random()}@evil.test>\r\n\r\n${body}\r\n`, 'latin1');
}

/** A message DKIM-signed by evil.test (nodemailer's signer), whatever its From says. */
async function signedByEvil(from: string): Promise<Buffer> {
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  const info = await transport.sendMail({
    from,
    to: 'placeholder@tempinbox.test',
    subject: 'Your statement',
    text: 'Your monthly statement is ready.\n',
    dkim: { domainName: 'evil.test', keySelector: 's1', privateKey: PRIVATE_KEY },
  });
  return info.message as Buffer;
}

/** Delivers `message` from evil.test's server and returns the stored message as check lists it, and its raw bytes. */
async function deliver(server: ServerProcess, owner: CookieClient, inbox: { email: string; username: string }, message: Buffer) {
  const before = new Set<string>((await owner.get(`/api/check/${inbox.username}`)).json.emails.map((m: { id: string }) => m.id));
  expect(await sendRawSmtp(server.smtpPort, 'bounce@evil.test', inbox.email, message, { localAddress: EVIL_SERVER, helo: 'mx.evil.test' })).toMatch(/^250 /);
  const listed = (await owner.get(`/api/check/${inbox.username}`)).json.emails.find((m: { id: string }) => !before.has(m.id)) as { id: string; from: string; auth: Auth | null };
  expect(listed).toBeDefined();
  const detail = (await owner.get(`/api/messages/${listed.id}`)).json as { auth: Auth | null };
  expect(detail.auth).toEqual(listed.auth);
  const raw = Buffer.from(await (await fetch(`${server.baseUrl}/api/messages/${listed.id}/raw`, { headers: { cookie: `tempinbox_session=${owner.cookie('tempinbox_session') ?? ''}` } })).arrayBuffer());
  return { listed, raw };
}

/** The header section of a raw message, as text. */
const headerOf = (raw: Buffer): string => raw.subarray(0, raw.indexOf('\r\n\r\n') + 2).toString('latin1');

/** A forged field naming our server, folded, in the middle of the sender's header. */
const FORGED = 'Authentication-Results: tempinbox.test;\r\n\tdkim=pass header.d=bank.test;\r\n\tspf=pass smtp.mailfrom=bank.test;\r\n\tdmarc=pass header.from=bank.test';

describe('a From field that names no single author (MAIL_AUTH=on)', () => {
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

  it('a second From field is DMARC permerror, in auth and in the stored Authentication-Results', async () => {
    const { listed, raw } = await deliver(server, owner, inbox, rawMessage(['From: Bank Security <security@bank.test>', 'From: <bounce@evil.test>']));
    expect(listed.auth).toEqual({
      spf: { result: 'pass', domain: 'evil.test' },
      dkim: [],
      dmarc: { result: 'permerror', domain: '', policy: null },
      arc: { result: 'none' },
    });
    expect(headerOf(raw)).toMatch(/\r\nAuthentication-Results: tempinbox\.test;\r\n(?: [^\r\n]*\r\n)*? dmarc=permerror \(2 From fields\)\r\n/);
  });

  it('the second From field first, or the bank after evil.test: the same', async () => {
    for (const order of [['From: <bounce@evil.test>', 'From: Bank Security <security@bank.test>'], ['from: Bank Security <security@bank.test>', 'FROM: <security@bank.test>']]) {
      const { listed } = await deliver(server, owner, inbox, rawMessage(order));
      expect(listed.auth?.dmarc, order.join(' / ')).toEqual({ result: 'permerror', domain: '', policy: null });
    }
  });

  it('no From field, and several addresses in one (of one domain or of two) are permerror', async () => {
    const cases: Array<[string, string[], string]> = [
      ['no From', ['Sender: <bounce@evil.test>'], 'no From field'],
      ['two domains', ['From: Bank Security <security@bank.test>, <bounce@evil.test>'], '2 addresses in From'],
      ['one domain twice', ['From: <security@bank.test>, <alerts@bank.test>'], '2 addresses in From'],
      ['a group of two', ['From: Bank: <security@bank.test>, <bounce@evil.test>;'], '2 addresses in From'],
      ['a name without an address', ['From: security'], 'no address in From'],
      ['an address with two domains', ['From: <security@bank.test@evil.test>'], 'no single From domain'],
    ];
    for (const [name, headers, reason] of cases) {
      const { listed, raw } = await deliver(server, owner, inbox, rawMessage(headers));
      expect(listed.auth?.dmarc, name).toEqual({ result: 'permerror', domain: '', policy: null });
      expect(headerOf(raw), name).toContain(`\r\n dmarc=permerror (${reason})\r\n`);
    }
  });

  it('one From address of bank.test from evil.test\'s server fails DMARC under p=reject, as before', async () => {
    const { listed } = await deliver(server, owner, inbox, rawMessage(['From: Bank Security <security@bank.test>']));
    expect(listed.auth?.dmarc).toEqual({ result: 'fail', domain: 'bank.test', policy: 'reject' });
    expect(listed.from).toBe('Bank Security <security@bank.test>');
  });

  it('a signature of evil.test on mail from another domain passes DKIM but not DMARC', async () => {
    const { listed } = await deliver(server, owner, inbox, await signedByEvil('"Bank Security" <security@bank.test>'));
    expect(listed.auth).toEqual({
      spf: { result: 'pass', domain: 'evil.test' },
      dkim: [{ result: 'pass', domain: 'evil.test', selector: 's1' }],
      dmarc: { result: 'fail', domain: 'bank.test', policy: 'reject' },
      arc: { result: 'none' },
    });
  });

  it('renames a forged Authentication-Results naming our server; ours is the only one left under the Received line', async () => {
    const sent = rawMessage(['From: Bank Security <security@bank.test>', FORGED, 'Authentication-Results: mx.bank.test; dkim=pass header.d=bank.test']);
    const { listed, raw } = await deliver(server, owner, inbox, sent);
    expect(listed.auth?.dmarc).toEqual({ result: 'fail', domain: 'bank.test', policy: 'reject' });
    const header = headerOf(raw);
    expect(header.match(/^Authentication-Results: tempinbox\.test;/gim)).toHaveLength(1);
    // Everything the sender wrote is there, byte for byte, but the forged field's name.
    const renamed = sent.toString('latin1').replace('Authentication-Results: tempinbox.test;', 'X-Original-Authentication-Results: tempinbox.test;');
    expect(raw.subarray(raw.length - Buffer.byteLength(renamed, 'latin1')).toString('latin1')).toBe(renamed);
    // Another server's result is not ours to judge: left as it came.
    expect(header).toContain('\r\nAuthentication-Results: mx.bank.test; dkim=pass header.d=bank.test\r\n');
  });
});

describe('a forged Authentication-Results with MAIL_AUTH=off', () => {
  let server: ServerProcess;
  const data = tempDataDir();

  beforeAll(async () => {
    server = await startServer({ DATABASE_URL: data.databaseUrl, RATE_LIMITS: 'off', MAIL_AUTH: 'off', DOMAINS: 'tempinbox.test,mail.tempinbox.test' });
  });
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
    data.cleanup();
  });

  it('is renamed too: no field under our Received line claims our name, and the rest is byte for byte as sent', async () => {
    const owner = new CookieClient(server.baseUrl);
    const inbox = (await owner.get('/api/create')).json;
    const sent = rawMessage([
      FORGED,
      'From: Bank Security <security@bank.test>',
      // Case, a comment before the id, a quoted id, a version, the other served domain, a space before the colon.
      'authentication-results:   (checked) "TEMPINBOX.TEST" 1; dkim=pass',
      'AUTHENTICATION-RESULTS : mail.tempinbox.test; spf=pass',
    ]);
    const { listed, raw } = await deliver(server, owner, inbox, sent);
    expect(listed.auth).toBeNull();
    const header = headerOf(raw);
    // Our trace lines, then at once the sender's first field, renamed: nothing reads as ours.
    expect(header).toMatch(/^Return-Path: <bounce@evil\.test>\r\nReceived: [^\r\n]*\r\n\t[^\r\n]*\r\n\t[^\r\n]*\r\nX-Original-Authentication-Results: tempinbox\.test;\r\n\tdkim=pass/);
    expect(header).not.toMatch(/^authentication-results\s*:/im);
    const renamed = sent
      .toString('latin1')
      .replace('Authentication-Results: tempinbox.test;', 'X-Original-Authentication-Results: tempinbox.test;')
      .replace('authentication-results:   (checked)', 'X-Original-Authentication-Results:   (checked)')
      .replace('AUTHENTICATION-RESULTS : mail', 'X-Original-Authentication-Results : mail');
    expect(raw.subarray(raw.length - Buffer.byteLength(renamed, 'latin1')).toString('latin1')).toBe(renamed);
  });

  it('leaves a message without such a field exactly as it came, and one in the body alone', async () => {
    const owner = new CookieClient(server.baseUrl);
    const inbox = (await owner.get('/api/create')).json;
    const sent = rawMessage(['From: <a@bank.test>', 'Authentication-Results: mx.bank.test; spf=pass'], `quoted:\r\n${FORGED}`);
    const { raw } = await deliver(server, owner, inbox, sent);
    expect(raw.subarray(raw.length - sent.length).equals(sent)).toBe(true);
  });
});
