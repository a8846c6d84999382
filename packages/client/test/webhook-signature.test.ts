import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyWebhookSignature, WEBHOOK_SIGNATURE_HEADER } from '../src/index.js';
import { signWebhookPayload } from '../src/webhook-signature.js';

const SECRET = 'whsec_0123456789abcdef';
const OTHER_SECRET = 'whsec_fedcba9876543210';
/** Non-ASCII on purpose: the HMAC is over the UTF-8 bytes, as sent. */
const BODY = '{"event":"message.received","inbox":"a@tempinbox.test","message":{"subject":"Grüße"}}';
const TOLERANCE = 300;

describe('verifyWebhookSignature', () => {
  const now = Math.floor(Date.now() / 1000);

  it('accepts a fresh signature of the body, as a string and as the bytes received', async () => {
    const header = await signWebhookPayload(SECRET, now, BODY);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(await verifyWebhookSignature(SECRET, header, BODY, TOLERANCE)).toBe(true);
    expect(await verifyWebhookSignature(SECRET, header, new TextEncoder().encode(BODY), TOLERANCE)).toBe(true);
    expect(WEBHOOK_SIGNATURE_HEADER).toBe('Tempinbox-Signature');
  });

  it('refuses a body changed by one character, or re-encoded', async () => {
    const header = await signWebhookPayload(SECRET, now, BODY);
    expect(await verifyWebhookSignature(SECRET, header, BODY.replace('Grüße', 'Grüsse'), TOLERANCE)).toBe(false);
    expect(await verifyWebhookSignature(SECRET, header, JSON.stringify(JSON.parse(BODY), null, 1), TOLERANCE)).toBe(false);
    expect(await verifyWebhookSignature(SECRET, header, `${BODY}\n`, TOLERANCE)).toBe(false);
  });

  it('refuses another secret', async () => {
    const header = await signWebhookPayload(SECRET, now, BODY);
    expect(await verifyWebhookSignature(OTHER_SECRET, header, BODY, TOLERANCE)).toBe(false);
  });

  it('refuses a timestamp outside the tolerance either way, and accepts one at its edge', async () => {
    const stale = await signWebhookPayload(SECRET, now - TOLERANCE - 5, BODY);
    const future = await signWebhookPayload(SECRET, now + TOLERANCE + 5, BODY);
    const edge = await signWebhookPayload(SECRET, now - 100, BODY);
    expect(await verifyWebhookSignature(SECRET, stale, BODY, TOLERANCE)).toBe(false);
    expect(await verifyWebhookSignature(SECRET, future, BODY, TOLERANCE)).toBe(false);
    expect(await verifyWebhookSignature(SECRET, edge, BODY, 100, now)).toBe(true);
    expect(await verifyWebhookSignature(SECRET, edge, BODY, 99, now)).toBe(false);
  });

  it('refuses a t that was changed after signing (the timestamp is signed too)', async () => {
    const header = await signWebhookPayload(SECRET, now, BODY);
    expect(await verifyWebhookSignature(SECRET, header.replace(`t=${now}`, `t=${now - 1}`), BODY, TOLERANCE)).toBe(false);
  });

  it('accepts the right v1 among several (secret rotation), and skips keys of later schemes', async () => {
    const header = await signWebhookPayload(SECRET, now, BODY);
    const v1 = header.split('v1=')[1] ?? '';
    expect(await verifyWebhookSignature(SECRET, `t=${now},v1=${'0'.repeat(64)},v1=${v1}`, BODY, TOLERANCE)).toBe(true);
    expect(await verifyWebhookSignature(SECRET, `t=${now},v2=abc,v1=${v1}`, BODY, TOLERANCE)).toBe(true);
  });

  it('answers false, never throws, for a malformed header', async () => {
    const header = await signWebhookPayload(SECRET, now, BODY);
    const v1 = header.split('v1=')[1] ?? '';
    const malformed = [
      '',
      'nonsense',
      `t=${now}`,
      `v1=${v1}`,
      `t=${now},v1=${v1.slice(2)}`,
      `t=${now},v1=${v1.slice(0, 62)}zz`,
      `t=abc,v1=${v1}`,
      `t=-${now},v1=${v1}`,
      `t=${now},t=${now},v1=${v1}`,
      `t=${now},v1`,
      `t=${now},v1=${v1},${'x'.repeat(2000)}`,
    ];
    for (const bad of malformed) expect([bad.slice(0, 40), await verifyWebhookSignature(SECRET, bad, BODY, TOLERANCE)]).toEqual([bad.slice(0, 40), false]);
  });

  it('refuses a tolerance that is no number of seconds', async () => {
    const header = await signWebhookPayload(SECRET, now, BODY);
    await expect(verifyWebhookSignature(SECRET, header, BODY, -1)).rejects.toThrow(RangeError);
    await expect(verifyWebhookSignature(SECRET, header, BODY, Number.NaN)).rejects.toThrow(RangeError);
  });

  it('is the server\'s own signing code, carried as it is (no drift between the two)', () => {
    const root = resolve(import.meta.dirname, '../../..');
    const server = readFileSync(resolve(root, 'src/domain/webhook-signature.ts'), 'utf8');
    const library = readFileSync(resolve(root, 'packages/client/src/webhook-signature.ts'), 'utf8');
    expect(library).toBe(server);
  });
});
