import { hash, randomBytes, randomFillSync } from 'node:crypto';

/** Bytes of one id (128 random bits). */
const ID_BYTES = 16;

/**
 * Random bytes drawn at once for this many ids: one call into the CSPRNG per 256 ids instead
 * of one (and a Buffer) per id, as Node's randomUUID keeps a batch of its own. 4 KiB per thread.
 */
const IDS_PER_DRAW = 256;

/** Random bytes not yet handed out, refilled in place when used up. */
const idPool = Buffer.alloc(ID_BYTES * IDS_PER_DRAW);
let idPoolAt = idPool.length;

/** Public identifiers (messages, attachments, inboxes): 128 random bits, base64url, 22 chars. */
export function newId(): string {
  if (idPoolAt >= idPool.length) {
    randomFillSync(idPool);
    idPoolAt = 0;
  }
  const id = idPool.toString('base64url', idPoolAt, idPoolAt + ID_BYTES);
  idPoolAt += ID_BYTES;
  return id;
}

/** Shape of an id made by newId(); anything else is rejected before touching storage. */
export const ID_PATTERN = /^[A-Za-z0-9_-]{22}$/;

/** True when `value` could be an id made by newId(). */
export function isId(value: string): boolean {
  return ID_PATTERN.test(value);
}

/** A session cookie value: 32 random bytes, base64url (43 chars). Only its hash is stored. */
export function newSessionToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Shape of a session token; a cookie of another shape is treated as no cookie. */
export const SESSION_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/**
 * SHA-256 hex of a secret. Session tokens and license keys carry >= 160 random bits, so a
 * fast hash is enough: there is nothing to brute-force offline that a slow hash would protect.
 */
export function hashSecret(secret: string): string {
  // One-shot hash: a fifth of createHash().update().digest()'s cost (no Hash object per call).
  return hash('sha256', secret, 'hex');
}
