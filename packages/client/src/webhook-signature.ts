/**
 * The `Tempinbox-Signature` header: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>"
 * under the secret>`. Written with Web Crypto (`crypto.subtle`) and `TextEncoder` only, globals
 * of browsers and of Node.js 19 and later, and without imports, so that the client library
 * (whose main entry runs in browsers) can carry this file as it is.
 */

/** The header that carries the signature. */
export const WEBHOOK_SIGNATURE_HEADER = 'Tempinbox-Signature';

/**
 * Longest header the verifier reads: `t=` and ten digits, then a few `v1=` values of 64 hex
 * digits each. A longer one is not ours; refusing it bounds the work a forged request costs.
 */
const MAX_HEADER_LENGTH = 1024;

/** `v1` values tried at most: room for a receiver rotating secrets, never a loop an attacker sizes. */
const MAX_SIGNATURES = 8;

const encoder = new TextEncoder();

/** The HMAC-SHA256 key of a secret: its UTF-8 bytes. */
function hmacKey(secret: string) {
  return crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
}

/** The signed bytes: the timestamp as written, a dot, then the body exactly as sent. */
function signedBytes(timestamp: string, rawBody: string | Uint8Array): Uint8Array<ArrayBuffer> {
  const body = typeof rawBody === 'string' ? encoder.encode(rawBody) : rawBody;
  const prefix = encoder.encode(`${timestamp}.`);
  const bytes = new Uint8Array(prefix.length + body.length);
  bytes.set(prefix, 0);
  bytes.set(body, prefix.length);
  return bytes;
}

function toHex(bytes: ArrayBuffer): string {
  return Array.from(new Uint8Array(bytes), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** The bytes of 64 hex digits (a SHA-256 HMAC), or null for anything else. */
function fromHex(hex: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) return null;
  const bytes = new Uint8Array(32);
  for (let i = 0; i < 32; i += 1) bytes[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

/** The header value for `rawBody` sent at `timestampSeconds` (unix seconds). */
export async function signWebhookPayload(secret: string, timestampSeconds: number, rawBody: string | Uint8Array): Promise<string> {
  if (!Number.isSafeInteger(timestampSeconds) || timestampSeconds < 0) throw new RangeError('timestampSeconds must be a non-negative integer');
  const timestamp = String(timestampSeconds);
  const mac = await crypto.subtle.sign('HMAC', await hmacKey(secret), signedBytes(timestamp, rawBody));
  return `t=${timestamp},v1=${toHex(mac)}`;
}

/**
 * True when `header` carries a `v1` signature of `rawBody` (the bytes as received, before any
 * JSON parsing) under `secret`, made within `toleranceSeconds` of now (either way, for clock
 * skew). The comparison is Web Crypto's HMAC verify, which does not leak through its timing
 * how much of a guess was right. Malformed headers are false, never an exception.
 */
export async function verifyWebhookSignature(
  secret: string,
  header: string,
  rawBody: string | Uint8Array,
  toleranceSeconds: number,
  nowSeconds: number = Math.floor(Date.now() / 1000),
): Promise<boolean> {
  if (!Number.isFinite(toleranceSeconds) || toleranceSeconds < 0) throw new RangeError('toleranceSeconds must be a non-negative number');
  if (header.length > MAX_HEADER_LENGTH) return false;
  let timestamp: string | undefined;
  const signatures: Array<Uint8Array<ArrayBuffer>> = [];
  for (const part of header.split(',')) {
    const at = part.indexOf('=');
    const key = part.slice(0, at).trim();
    const value = part.slice(at + 1).trim();
    if (at === -1) return false;
    if (key === 't') {
      if (timestamp !== undefined || !/^\d{1,15}$/.test(value)) return false;
      timestamp = value;
    } else if (key === 'v1') {
      const signature = fromHex(value);
      if (signature === null) return false;
      if (signatures.length < MAX_SIGNATURES) signatures.push(signature);
    }
    // Other keys (a later scheme's `v2`) are skipped, so that adding one breaks no verifier.
  }
  if (timestamp === undefined || signatures.length === 0) return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds) return false;
  const key = await hmacKey(secret);
  const data = signedBytes(timestamp, rawBody);
  for (const signature of signatures) {
    if (await crypto.subtle.verify('HMAC', key, signature, data)) return true;
  }
  return false;
}
