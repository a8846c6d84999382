import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDestinationGuard } from '../../src/webhooks/destination-guard.js';
import { WebhookSender, type WebhookRequest } from '../../src/webhooks/webhook-sender.js';
import { startLoopbackDnsServer, type LoopbackDnsServer } from '../../support/loopback-dns-server.js';
import { toolAvailable, toolPath } from '../helpers/external-tools.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';

interface Pem {
  key: Buffer;
  cert: Buffer;
}

/**
 * HTTPS deliveries to receivers on 127.0.0.1 with throwaway self-signed certificates: the
 * sender connects to the checked address but verifies the certificate against the host name
 * of the URL (and sends it as SNI), so a certificate for the address, or for another name,
 * fails. The certificates come from openssl (skipped without it, a failure in CI).
 */
describe.skipIf(!toolAvailable('openssl', 'webhook deliveries over HTTPS with throwaway certificates'))('webhook sender over HTTPS', () => {
  let dir = '';
  const certs: Record<'hook' | 'other' | 'address', Pem> = {} as Record<'hook' | 'other' | 'address', Pem>;
  let dns: LoopbackDnsServer;

  /** A P-256 key and a one-day self-signed certificate for `subjectAltName` (fast to make). */
  function makeCert(name: string, subjectAltName: string): Pem {
    const keyFile = join(dir, `${name}.key`);
    const certFile = join(dir, `${name}.crt`);
    execFileSync(
      toolPath('openssl'),
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-subj', `/CN=${name}`, '-addext', `subjectAltName=${subjectAltName}`, '-days', '1', '-keyout', keyFile, '-out', certFile],
      { stdio: 'ignore', timeout: 30_000 },
    );
    return { key: readFileSync(keyFile), cert: readFileSync(certFile) };
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tempinbox-webhook-tls-'));
    certs.hook = makeCert('hook.test', 'DNS:hook.test');
    certs.other = makeCert('other.test', 'DNS:other.test');
    certs.address = makeCert('127.0.0.1', 'IP:127.0.0.1');
    dns = await startLoopbackDnsServer({}, { addresses: { 'hook.test': ['127.0.0.1'] } });
  });
  afterAll(async () => {
    await dns.close();
    if (dir !== '') rmSync(dir, { recursive: true, force: true });
  });

  /** A sender that trusts `ca` only (the service trusts the system's roots instead). */
  function sender(ca?: Buffer): WebhookSender {
    const guard = createDestinationGuard({ webhookAllowedNetworks: ['127.0.0.0/8'], dnsServers: [dns.address], dnsTimeoutMs: 1000 });
    return new WebhookSender({ guard, userAgent: 'test', deadlineMs: 5000, ...(ca === undefined ? {} : { ca }) });
  }

  const request = (url: string): WebhookRequest => ({ url, secret: 'test-secret-0123456789', deliveryId: 'dlv_tls', body: '{}' });

  it('delivers when the certificate names the URL\'s host, asking for that name by SNI', async () => {
    const receiver = await startWebhookReceiver(undefined, certs.hook);
    try {
      expect(await sender(certs.hook.cert).attempt(request(`https://hook.test:${receiver.port}/in`))).toEqual({ delivered: true, status: 200, error: null });
      expect(receiver.requests).toMatchObject([{ servername: 'hook.test', localAddress: '127.0.0.1', headers: { host: `hook.test:${receiver.port}` } }]);
    } finally {
      await receiver.close();
    }
  });

  it.each([
    ['another name', 'other' as const],
    ['the address connected to, not the name', 'address' as const],
  ])('fails when the certificate is for %s (verified against the host name)', async (_what, which) => {
    const receiver = await startWebhookReceiver(undefined, certs[which]);
    try {
      const outcome = await sender(certs[which].cert).attempt(request(`https://hook.test:${receiver.port}/`));
      expect(outcome).toMatchObject({ delivered: false, status: null, error: expect.stringContaining('ERR_TLS_CERT_ALTNAME_INVALID') });
      expect(receiver.requests).toHaveLength(0);
    } finally {
      await receiver.close();
    }
  });

  it('fails when the certificate is not trusted', async () => {
    const receiver = await startWebhookReceiver(undefined, certs.hook);
    try {
      const outcome = await sender().attempt(request(`https://hook.test:${receiver.port}/`));
      expect(outcome).toMatchObject({ delivered: false, status: null, error: expect.stringMatching(/SELF_SIGNED|UNABLE_TO_VERIFY/) });
      expect(receiver.requests).toHaveLength(0);
    } finally {
      await receiver.close();
    }
  });

  it('verifies an address URL against the address, and sends no SNI for it', async () => {
    const receiver = await startWebhookReceiver(undefined, certs.address);
    try {
      expect(await sender(certs.address.cert).attempt(request(`https://127.0.0.1:${receiver.port}/`))).toMatchObject({ delivered: true, status: 200 });
      expect(receiver.requests).toMatchObject([{ servername: null }]);
      const outcome = await sender(certs.hook.cert).attempt(request(`https://127.0.0.1:${receiver.port}/`));
      expect(outcome).toMatchObject({ delivered: false, error: expect.stringMatching(/ERR_TLS_CERT_ALTNAME_INVALID|UNABLE_TO_VERIFY|SELF_SIGNED/) });
    } finally {
      await receiver.close();
    }
  });
});
