import { hash } from 'node:crypto';

/**
 * Changes every check ETag when the answer's format changes (a new field, another cut): a
 * client holding a tag from an older release gets the new answer, not a 304.
 */
export const CHECK_ETAG_FORMAT = 1;

/** Characters of base64url kept of the SHA-256: 132 bits, no collision between answers in practice. */
const ETAG_HASH_CHARS = 22;

/** What one check answer depends on besides the messages themselves (which never change). */
export interface CheckEtagInput {
  inboxId: string;
  /** InboxMark.version: which messages the inbox holds. */
  version: string;
  sinceId?: string;
  beforeId?: string;
  limit: number;
  /** The listing's filters (case-insensitive substrings). */
  filter?: { to?: string; from?: string; subject?: string };
}

/**
 * The strong validator of a check answer (docs/api.md, check: "ETag"): a hash of the inbox,
 * the store's version of its message set, every query parameter that shapes the answer, and
 * the format. Hashed, so the tag tells nothing of the store's counters.
 */
export function checkEtag(input: CheckEtagInput): string {
  const { inboxId, version, sinceId, beforeId, limit, filter } = input;
  const parts = [CHECK_ETAG_FORMAT, inboxId, version, sinceId ?? '', beforeId ?? '', limit, filter?.to ?? '', filter?.from ?? '', filter?.subject ?? ''];
  return `"${hash('sha256', JSON.stringify(parts), 'base64url').slice(0, ETAG_HASH_CHARS)}"`;
}

/**
 * Whether an If-None-Match header names `etag` (RFC 9110 §13.1.2): `*`, or a list of tags
 * of which one is equal under the weak comparison GET uses (a `W/` prefix is ignored).
 */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => {
    const trimmed = tag.trim();
    return (trimmed.startsWith('W/') ? trimmed.slice(2) : trimmed) === etag;
  });
}
