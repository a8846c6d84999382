import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Socket } from 'node:net';
import { resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { verifyWebhookSignature } from '../../src/domain/webhook-signature.js';
import { createDestinationGuard, type DestinationGuard } from '../../src/webhooks/destination-guard.js';
import { WEBHOOK_ATTEMPT_DEADLINE_MS, WEBHOOK_RESPONSE_CAP_BYTES } from '../../src/webhooks/webhook-limits.js';
import { WebhookSender, webhookUserAgent, type WebhookRequest } from '../../src/webhooks/webhook-sender.js';
import { startLoopbackDnsServer, type AddressZone, type LoopbackDnsServer } from '../../support/loopback-dns-server.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * The sender against real receivers on 127.0.0.1, names resolved by a DNS server on loopback.
 * Every TCP connection the process opens is recorded (Socket.prototype.connect, which node:http
 * and node:tls both go through): after each test, every target must be in 127.0.0.0/8, so no
 * test here can send a packet anywhere else, and a refusal is proved to come before any connect.
 */
const connectTargets: string[] = [];
const realConnect = Socket.prototype.connect as (this: Socket, ...args: unknown[]) => Socket;
vi.spyOn(Socket.prototype, 'connect').mockImplementation(function (this: Socket, ...args: unknown[]) {
  // net.connect passes its normalised arguments as one array; socket.connect(options) an object.
  // An unrecognised shape records "undefined", which fails the check below rather than passing.
  const first = (Array.isArray(args[0]) ? (args[0] as unknown[])[0] : args[0]) as { host?: string } | number;
  connectTargets.push(String(typeof first === 'object' ? first.host : args[1]));
  return realConnect.apply(this, args);
});

const SECRET = 'test-secret-0123456789';
const BODY = JSON.stringify({ event: 'message.received', inbox: 'abc@tempinbox.test', message: { id: 'm1', subject: 'Grüße' } });

describe('webhook sender', () => {
  const addresses: AddressZone = { 'hook.test': ['127.0.0.1'], 'mixed.test': ['93.184.216.34', '10.0.0.1'], 'public.test': ['93.184.216.34'] };
  let dns: LoopbackDnsServer;
  let receiver: WebhookReceiver;
  let openGuard: DestinationGuard;
  let strictGuard: DestinationGuard;
  let open: WebhookSender;
  let strict: WebhookSender;

  const request = (url: string): WebhookRequest => ({ url, secret: SECRET, deliveryId: 'dlv_0001', body: BODY });

  beforeAll(async () => {
    dns = await startLoopbackDnsServer({}, { addresses });
    receiver = await startWebhookReceiver();
    const dnsConfig = { dnsServers: [dns.address], dnsTimeoutMs: 1000 };
    openGuard = createDestinationGuard({ ...dnsConfig, webhookAllowedNetworks: ['127.0.0.0/8'] });
    strictGuard = createDestinationGuard({ ...dnsConfig, webhookAllowedNetworks: undefined });
    open = new WebhookSender({ guard: openGuard, userAgent: webhookUserAgent() });
    strict = new WebhookSender({ guard: strictGuard, userAgent: webhookUserAgent() });
  });
  afterAll(async () => {
    await receiver.close();
    await dns.close();
  });
  afterEach(() => {
    expect(connectTargets.filter((host) => !/^127\.\d+\.\d+\.\d+$/.test(host))).toEqual([]);
  });

  it('posts one signed request to a receiver in an allowed network; the signature verifies', async () => {
    const before = receiver.requests.length;
    expect(await open.attempt(request(`http://hook.test:${receiver.port}/in?src=tempinbox`))).toEqual({ delivered: true, status: 200, error: null });
    const got = receiver.requests.slice(before);
    expect(got).toHaveLength(1);
    const [post] = got;
    const version = (JSON.parse(readFileSync(resolve(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string }).version;
    expect(post).toMatchObject({ method: 'POST', url: '/in?src=tempinbox', body: BODY, localAddress: '127.0.0.1' });
    expect(post?.headers).toMatchObject({
      host: `hook.test:${receiver.port}`,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(BODY)),
      'user-agent': `tempinbox-webhook/${version}`,
      'tempinbox-delivery': 'dlv_0001',
    });
    const header = String(post?.headers['tempinbox-signature']);
    const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
    expect(match).not.toBeNull();
    const t = Number(match?.[1]);
    expect(Math.abs(t - Date.now() / 1000)).toBeLessThan(5);
    // Checked two ways: the few lines of node:crypto a receiver writes, and our verifier.
    expect(match?.[2]).toBe(createHmac('sha256', SECRET).update(`${t}.${BODY}`).digest('hex'));
    expect(await verifyWebhookSignature(SECRET, header, post?.body ?? '', 300)).toBe(true);
    expect(await verifyWebhookSignature('another-secret-000000', header, post?.body ?? '', 300)).toBe(false);
  });

  it('refuses a loopback destination outside the allowed networks before connecting, by name or literal', async () => {
    for (const url of [`http://hook.test:${receiver.port}/`, `http://127.0.0.1:${receiver.port}/`, `http://[::ffff:127.0.0.1]:${receiver.port}/`]) {
      const connects = connectTargets.length;
      const accepted = receiver.connections;
      const outcome = await strict.attempt(request(url));
      expect(outcome).toMatchObject({ delivered: false, status: null, error: expect.stringContaining('loopback address') });
      expect(connectTargets.length).toBe(connects);
      expect(receiver.connections).toBe(accepted);
    }
  });

  it('refuses a name with one private address among public ones, connecting to none of them', async () => {
    const connects = connectTargets.length;
    expect(await strict.attempt(request('http://mixed.test/'))).toMatchObject({ delivered: false, status: null, error: expect.stringContaining('private') });
    expect(connectTargets.length).toBe(connects);
  });

  it('connects only to the address it checked: no second look-up, whatever DNS says by then', async () => {
    const destination = await openGuard.check(`http://pinned.test:${receiver.port}/`);
    expect(destination).toMatchObject({ ok: false, code: 'invalid_request' }); // not in the zone yet
    addresses['pinned.test'] = ['127.0.0.1'];
    const checked = await openGuard.check(`http://pinned.test:${receiver.port}/`);
    if (!checked.ok) throw new Error(checked.message);
    const queries = dns.queryCount;
    // The name now points elsewhere; the post must still go to the address checked.
    addresses['pinned.test'] = ['127.0.0.2'];
    const before = receiver.requests.length;
    expect(await open.post(checked.destination, request(`http://pinned.test:${receiver.port}/`))).toMatchObject({ delivered: true, status: 200 });
    expect(dns.queryCount).toBe(queries);
    expect(receiver.requests.slice(before)).toMatchObject([{ localAddress: '127.0.0.1', headers: { host: `pinned.test:${receiver.port}` } }]);
    expect(connectTargets.at(-1)).toBe('127.0.0.1');
  });

  it('resolves again at the next attempt: a name rebound from public to loopback is refused then', async () => {
    addresses['rebind.test'] = ['93.184.216.34'];
    // The first attempt's check: public, so it would be posted to (never here: nothing leaves loopback).
    expect(await strictGuard.check(`http://rebind.test:${receiver.port}/`)).toMatchObject({ ok: true, destination: { addresses: ['93.184.216.34'] } });
    addresses['rebind.test'] = ['127.0.0.1'];
    const connects = connectTargets.length;
    expect(await strict.attempt(request(`http://rebind.test:${receiver.port}/`))).toMatchObject({
      delivered: false,
      status: null,
      error: expect.stringContaining('resolves to a loopback address'),
    });
    expect(connectTargets.length).toBe(connects);
  });

  it('tries the next checked address when connecting to one fails, and says why when all do', async () => {
    // The receiver listens on 127.0.0.1 only: 127.0.0.3 refuses the connection.
    addresses['two.test'] = ['127.0.0.3', '127.0.0.1'];
    const before = receiver.requests.length;
    expect(await open.attempt(request(`http://two.test:${receiver.port}/`))).toMatchObject({ delivered: true, status: 200 });
    expect(receiver.requests.slice(before)).toMatchObject([{ localAddress: '127.0.0.1' }]);
    expect(connectTargets.slice(-2)).toEqual(['127.0.0.3', '127.0.0.1']);
    addresses['two.test'] = ['127.0.0.3'];
    expect(await open.attempt(request(`http://two.test:${receiver.port}/`))).toMatchObject({
      delivered: false,
      status: null,
      error: expect.stringContaining('ECONNREFUSED'),
    });
  });

  it('fails at the deadline when the receiver never answers, and keeps 10 s as the default', async () => {
    expect(WEBHOOK_ATTEMPT_DEADLINE_MS).toBe(10_000);
    const silent = await startWebhookReceiver(() => undefined);
    try {
      const quick = new WebhookSender({ guard: openGuard, userAgent: 'test', deadlineMs: 400 });
      const started = performance.now();
      const outcome = await quick.attempt(request(`http://hook.test:${silent.port}/`));
      const elapsed = performance.now() - started;
      expect(outcome).toEqual({ delivered: false, status: null, error: 'no answer within 400 ms' });
      expect(silent.requests).toHaveLength(1);
      expect(elapsed).toBeGreaterThanOrEqual(390);
      expect(elapsed).toBeLessThan(1500);
      await vi.waitFor(() => expect(silent.closed).toBe(1));
    } finally {
      await silent.close();
    }
  });

  it('reads at most 64 KiB of an endless response, then closes the connection', async () => {
    let written = 0;
    const flood = await startWebhookReceiver((_request, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(16 * 1024, 0x61);
      // 1 MiB, never ended: only the cap can end the attempt before its deadline.
      const pump = (): void => {
        while (written < 1024 * 1024) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
      };
      pump();
    });
    try {
      const patient = new WebhookSender({ guard: openGuard, userAgent: 'test', deadlineMs: 5000 });
      const started = performance.now();
      expect(await patient.attempt(request(`http://hook.test:${flood.port}/`))).toEqual({ delivered: true, status: 200, error: null });
      expect(performance.now() - started).toBeLessThan(2500);
      await vi.waitFor(() => expect(flood.closed).toBe(1));
      expect(WEBHOOK_RESPONSE_CAP_BYTES).toBe(65_536);
    } finally {
      await flood.close();
    }
  });

  it('counts a redirect as a failure and does not follow it', async () => {
    const target = await startWebhookReceiver();
    const redirecting = await startWebhookReceiver((_request, res) => {
      res.writeHead(302, { location: `http://hook.test:${target.port}/elsewhere` });
      res.end();
    });
    try {
      expect(await open.attempt(request(`http://hook.test:${redirecting.port}/`))).toEqual({ delivered: false, status: 302, error: 'redirect not followed' });
      expect(redirecting.requests).toHaveLength(1);
      expect(target.connections).toBe(0);
    } finally {
      await target.close();
      await redirecting.close();
    }
  });

  it('records the status of a receiver that answers anything but 2xx', async () => {
    const failing = await startWebhookReceiver((_request, res) => {
      res.statusCode = 500;
      res.end('boom');
    });
    try {
      expect(await open.attempt(request(`http://hook.test:${failing.port}/`))).toEqual({ delivered: false, status: 500, error: null });
      expect(await open.attempt(request('http://nowhere.test/'))).toMatchObject({ delivered: false, status: null, error: expect.stringContaining('does not resolve') });
      expect(await open.attempt(request('ftp://hook.test/'))).toMatchObject({ delivered: false, status: null, error: expect.stringContaining('http://') });
    } finally {
      await failing.close();
    }
  });
});
