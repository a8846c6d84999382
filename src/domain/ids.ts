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
  // Time-ordered ids take 10 bytes at a time: refill whenever a whole id no longer fits.
  if (idPoolAt + ID_BYTES > idPool.length) {
    randomFillSync(idPool);
    idPoolAt = 0;
  }
  const id = idPool.toString('base64url', idPoolAt, idPoolAt + ID_BYTES);
  idPoolAt += ID_BYTES;
  return id;
}

/** Bytes of the millisecond time that starts a time-ordered id (48 bits: until the year 10889). */
const TIME_BYTES = 6;

/** One time-ordered id being assembled: the time, then random bytes. */
const timeOrdered = Buffer.alloc(ID_BYTES);

/**
 * An id of the same shape as newId()'s whose first 48 bits are the time in ms and the other
 * 80 random, for rows whose id is a key of ours only and never shown (a message's content).
 * Ids made close in time share their first characters, so each index on such ids takes new
 * rows in one small region, which the commits of a burst rewrite once, rather than on a
 * random page of the whole index each. 80 random bits leave a collision within one
 * millisecond out of reach.
 */
export function newTimeOrderedId(now: number = Date.now()): string {
  if (idPoolAt + ID_BYTES - TIME_BYTES > idPool.length) {
    randomFillSync(idPool);
    idPoolAt = 0;
  }
  timeOrdered.writeUIntBE(Math.max(0, Math.floor(now)) % 2 ** 48, 0, TIME_BYTES);
  idPool.copy(timeOrdered, TIME_BYTES, idPoolAt, idPoolAt + ID_BYTES - TIME_BYTES);
  idPoolAt += ID_BYTES - TIME_BYTES;
  return timeOrdered.toString('base64url');
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
