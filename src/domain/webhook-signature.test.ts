import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signWebhookPayload, verifyWebhookSignature } from './webhook-signature.js';

const SECRET = 'whsec_0123456789abcdef';
const BODY = '{"event":"message.received","inbox":"abc@tempinbox.test","message":{"subject":"Grüße"}}';
const T = 1_800_000_000;

/** The signature as a receiver computes it in a few lines of node:crypto (the docs' snippet). */
function reference(secret: string, t: number, body: string): string {
  return createHmac('sha256', secret).update(`${t}.${body}`).digest('hex');
}

describe('signWebhookPayload', () => {
  it('is t=<seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">, the same as node:crypto computes', async () => {
    expect(await signWebhookPayload(SECRET, T, BODY)).toBe(`t=${T},v1=${reference(SECRET, T, BODY)}`);
  });

  it('signs bytes as given, a string as its UTF-8 bytes', async () => {
    expect(await signWebhookPayload(SECRET, T, new TextEncoder().encode(BODY))).toBe(await signWebhookPayload(SECRET, T, BODY));
  });

  it('refuses a timestamp that is not whole seconds', async () => {
    await expect(signWebhookPayload(SECRET, 1.5, BODY)).rejects.toThrow(RangeError);
  });
});

describe('verifyWebhookSignature', () => {
  const header = `t=${T},v1=${reference(SECRET, T, BODY)}`;

  it('accepts our signature within the tolerance, on either side of now', async () => {
    expect(await verifyWebhookSignature(SECRET, header, BODY, 300, T)).toBe(true);
    expect(await verifyWebhookSignature(SECRET, header, BODY, 300, T + 300)).toBe(true);
    expect(await verifyWebhookSignature(SECRET, header, BODY, 300, T - 300)).toBe(true);
    expect(await verifyWebhookSignature(SECRET, header, new TextEncoder().encode(BODY), 300, T)).toBe(true);
  });

  it('refuses a signature older or newer than the tolerance (a replayed delivery)', async () => {
    expect(await verifyWebhookSignature(SECRET, header, BODY, 300, T + 301)).toBe(false);
    expect(await verifyWebhookSignature(SECRET, header, BODY, 300, T - 301)).toBe(false);
  });

  it('refuses another secret, a changed body and a changed timestamp', async () => {
    expect(await verifyWebhookSignature('whsec_another-secret-0000', header, BODY, 300, T)).toBe(false);
    expect(await verifyWebhookSignature(SECRET, header, BODY.replace('Grüße', 'Grusse'), 300, T)).toBe(false);
    expect(await verifyWebhookSignature(SECRET, header, `${BODY} `, 300, T)).toBe(false);
    expect(await verifyWebhookSignature(SECRET, header.replace(`t=${T}`, `t=${T + 1}`), BODY, 300, T)).toBe(false);
  });

  it('accepts when any of several v1 values matches (a receiver rotating secrets), in either order of fields', async () => {
    const wrong = '0'.repeat(64);
    expect(await verifyWebhookSignature(SECRET, `v1=${wrong}, t=${T}, v1=${reference(SECRET, T, BODY)}`, BODY, 300, T)).toBe(true);
    expect(await verifyWebhookSignature(SECRET, `t=${T},v2=future-scheme,v1=${reference(SECRET, T, BODY)}`, BODY, 300, T)).toBe(true);
    expect(await verifyWebhookSignature(SECRET, `t=${T},v1=${reference(SECRET, T, BODY).toUpperCase()}`, BODY, 300, T)).toBe(true);
  });

  it.each([
    ['', 'empty'],
    [`v1=${'a'.repeat(64)}`, 'no timestamp'],
    [`t=${T}`, 'no signature'],
    [`t=${T},t=${T},v1=${'a'.repeat(64)}`, 'two timestamps'],
    [`t=-5,v1=${'a'.repeat(64)}`, 'a negative timestamp'],
    [`t=1e9,v1=${'a'.repeat(64)}`, 'a timestamp not in digits'],
    [`t=${T},v1=${'a'.repeat(63)}`, 'a short signature'],
    [`t=${T},v1=${'g'.repeat(64)}`, 'a signature not in hex'],
    [`t=${T},v1`, 'a field without a value'],
    [`t=${T},${'v1=' + 'a'.repeat(64) + ','}`.repeat(20), 'a header longer than 1 KiB'],
  ])('is false, not an exception, for %j (%s)', async (bad) => {
    expect(await verifyWebhookSignature(SECRET, bad, BODY, 300, T)).toBe(false);
  });

  it('refuses a negative tolerance as a programming error', async () => {
    await expect(verifyWebhookSignature(SECRET, header, BODY, -1, T)).rejects.toThrow(RangeError);
  });

  it('verifies what signWebhookPayload signed, with the clock of now by default', async () => {
    const now = Math.floor(Date.now() / 1000);
    expect(await verifyWebhookSignature(SECRET, await signWebhookPayload(SECRET, now, BODY), BODY, 60)).toBe(true);
  });
});
