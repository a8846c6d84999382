import { randomBytes } from 'node:crypto';

/**
 * Shortest secret a user may choose: 16 visible ASCII characters can carry about 100 bits,
 * beyond any guessing through forged deliveries; shorter ones are passwords typed by hand.
 */
export const WEBHOOK_SECRET_MIN_LENGTH = 16;

/** Longest secret accepted: SHA-256's HMAC hashes keys over 64 bytes first anyway; 128 leaves room for any generator's format. */
export const WEBHOOK_SECRET_MAX_LENGTH = 128;

/** Random bytes of a generated secret: 256 bits, the HMAC-SHA256 key size (RFC 2104 §3 recommends at least the output length). */
const GENERATED_SECRET_BYTES = 32;

/**
 * Characters of a secret: visible ASCII, `!` to `~`. The key is the secret's bytes, so it must
 * be the same bytes in every language the receiver is written in: ASCII has one encoding and
 * no Unicode normalisation. No spaces, so a line break or blank copied with it is an error
 * here rather than a signature that never verifies. Hex, base64 and base64url secrets (what
 * `openssl rand` and password managers make) all fit.
 */
const SECRET_PATTERN = /^[\x21-\x7e]+$/;

/** Why `secret` cannot sign webhooks (a sentence for `invalid_request`), or null when it can. */
export function webhookSecretProblem(secret: string): string | null {
  if (secret.length < WEBHOOK_SECRET_MIN_LENGTH || secret.length > WEBHOOK_SECRET_MAX_LENGTH) {
    return `A webhook secret is ${WEBHOOK_SECRET_MIN_LENGTH} to ${WEBHOOK_SECRET_MAX_LENGTH} characters.`;
  }
  if (!SECRET_PATTERN.test(secret)) return 'A webhook secret is visible ASCII characters (! to ~): no spaces, no other characters.';
  return null;
}

/** A secret for a webhook set without one: 32 random bytes, base64url (43 characters). */
export function newWebhookSecret(): string {
  return randomBytes(GENERATED_SECRET_BYTES).toString('base64url');
}
