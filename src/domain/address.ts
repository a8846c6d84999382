import { domainToASCII } from 'node:url';
import { normalizeUsername } from './username.js';

/** A recipient split into what delivery decides on. */
export interface RecipientAddress {
  /** Local part without the `+tag`, lowercase. */
  username: string;
  /** The `+tag` part, if any (kept for the record, not used for routing). */
  tag: string | null;
  /** Domain, lowercase, without a trailing dot. */
  domain: string;
}

/** RFC 5321 §4.5.3.1: a path is at most 256 octets; anything longer is not an address. */
export const MAX_ADDRESS_LENGTH = 256;

/**
 * Splits `name+tag@Domain.` into username/tag/domain (case-insensitive, plus-addressing).
 * Returns null for something that is not a plain mailbox address.
 */
export function parseRecipient(address: string): RecipientAddress | null {
  if (address.length === 0 || address.length > MAX_ADDRESS_LENGTH) return null;
  const at = address.lastIndexOf('@');
  if (at <= 0 || at === address.length - 1) return null;
  const local = address.slice(0, at);
  // smtp-server hands over IDNs in Unicode; served domains are configured in ASCII (punycode).
  const domain = domainToASCII(address.slice(at + 1).toLowerCase().replace(/\.$/, ''));
  if (domain.length === 0 || !/^[a-z0-9.-]+$/.test(domain)) return null;
  const plus = local.indexOf('+');
  const base = plus === -1 ? local : local.slice(0, plus);
  const tag = plus === -1 ? null : local.slice(plus + 1);
  return { username: normalizeUsername(base), tag, domain };
}

/**
 * Splits what GET /api/check/<username> and DELETE /api/inbox/<username> take: a username,
 * or a full address `name@domain` (a `+tag` is dropped as in delivery). Lowercases both.
 */
export function splitInboxParam(param: string): { username: string; domain: string | null } {
  if (!param.includes('@')) return { username: normalizeUsername(param), domain: null };
  const parsed = parseRecipient(param);
  if (parsed === null) return { username: '', domain: null };
  return { username: parsed.username, domain: parsed.domain };
}
