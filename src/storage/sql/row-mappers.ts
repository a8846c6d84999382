import type { Selectable } from 'kysely';
import { isAuthResult, isDmarcPolicy, type MessageLink, type SenderAuth } from '../../domain/sender-auth.js';
import type { Inbox, License, MailHeader, Session } from '../../domain/types.js';
import type { InboxUsage } from '../../ports/mail-store.js';
import type { DbCount, InboxesTable, LicensesTable, SessionsTable } from './database.js';

/** Dates are stored as epoch milliseconds (see database.ts). */
export function toMillis(date: Date): number {
  return date.getTime();
}

/** Reads a stored timestamp; Number() because PostgreSQL returns int8 as a string. */
export function toDate(value: number | string | bigint): Date {
  return new Date(Number(value));
}

/** Reads a COUNT(*) (a string or bigint on some drivers); a missing value is zero. */
export function toCount(value: DbCount | null | undefined): number {
  return value === null || value === undefined ? 0 : Number(value);
}

/** Binds bytes as a Buffer view (no copy): both drivers know Buffers for blob/bytea parameters. */
export function toBlob(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Copies driver bytes into a plain Uint8Array: drivers return Buffers that may be slices of
 * a shared pool, and callers must see exactly the stored bytes and nothing around them.
 */
export function fromBlob(value: Uint8Array): Uint8Array {
  return new Uint8Array(value);
}

/** A sessions row as the domain record. */
export function toSession(row: Selectable<SessionsTable>): Session {
  return {
    id: row.id,
    tokenHash: row.token_hash,
    createdAt: toDate(row.created_at),
    expiresAt: toDate(row.expires_at),
    licenseId: row.license_id,
  };
}

/** A licenses row as the domain record. */
export function toLicense(row: Selectable<LicensesTable>): License {
  return {
    id: row.id,
    keyHash: row.key_hash,
    createdAt: toDate(row.created_at),
    validUntil: toDate(row.valid_until),
    maxSessions: Number(row.max_sessions),
    revokedAt: row.revoked_at === null ? null : toDate(row.revoked_at),
  };
}

/** An inboxes row as the domain record; its usage counters are read apart (toUsage), where they decide. */
export function toInbox(row: Pick<Selectable<InboxesTable>, 'id' | 'username' | 'domain' | 'created_at' | 'expires_at' | 'session_id' | 'license_id'>): Inbox {
  return {
    id: row.id,
    username: row.username,
    domain: row.domain,
    createdAt: toDate(row.created_at),
    expiresAt: toDate(row.expires_at),
    sessionId: row.session_id,
    licenseId: row.license_id,
  };
}

/** The stored usage counters of an inbox row (migration 0005-inbox-usage). */
export function toUsage(row: { message_count: DbCount; byte_count: DbCount }): InboxUsage {
  return { messages: toCount(row.message_count), bytes: toCount(row.byte_count) };
}

/** Headers are stored as JSON text; a row that does not parse yields no headers, never a crash. */
export function parseHeaders(json: string): MailHeader[] {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return [];
  }
  if (!Array.isArray(value)) return [];
  const headers: MailHeader[] = [];
  for (const item of value as unknown[]) {
    if (typeof item !== 'object' || item === null) continue;
    const { name, value: text } = item as Record<string, unknown>;
    if (typeof name === 'string' && typeof text === 'string') headers.push({ name, value: text });
  }
  return headers;
}

/** From header as written, else the envelope sender (MessageView.from). */
export function displayFrom(fromHeader: string, envelopeFrom: string): string {
  return fromHeader !== '' ? fromHeader : envelopeFrom;
}

/** To header as written, else the address of the inbox holding the copy (MessageView.to). */
export function displayTo(toHeader: string, username: string, domain: string): string {
  return toHeader !== '' ? toHeader : `${username}@${domain}`;
}

/** Parses stored JSON text; anything unreadable is undefined, never a crash. */
function readJson(json: string | null): unknown {
  if (json === null) return undefined;
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return undefined;
  }
}

/** Stored codes (JSON array of strings); missing or unreadable: none. */
export function parseCodes(json: string | null): string[] {
  const value = readJson(json);
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/** Stored links (JSON array of {url, text}); missing or unreadable: none. */
export function parseLinks(json: string | null): MessageLink[] {
  const value = readJson(json);
  if (!Array.isArray(value)) return [];
  return value.flatMap((item: unknown) => {
    if (typeof item !== 'object' || item === null) return [];
    const { url, text } = item as Record<string, unknown>;
    return typeof url === 'string' && typeof text === 'string' ? [{ url, text }] : [];
  });
}

/** Stored sender authentication; NULL (not checked) or not of the expected shape: null. */
export function parseAuth(json: string | null): SenderAuth | null {
  const value = readJson(json) as Partial<SenderAuth> | undefined;
  if (typeof value !== 'object' || value === null) return null;
  const { spf, dkim, dmarc, arc } = value;
  const ok =
    isAuthResult(spf?.result) && typeof spf.domain === 'string' &&
    Array.isArray(dkim) && dkim.every((d) => isAuthResult(d?.result) && typeof d.domain === 'string' && typeof d.selector === 'string') &&
    isAuthResult(dmarc?.result) && typeof dmarc.domain === 'string' && isDmarcPolicy(dmarc.policy) &&
    isAuthResult(arc?.result);
  if (!ok) return null;
  return {
    spf: { result: spf.result, domain: spf.domain },
    dkim: dkim.map((d) => ({ result: d.result, domain: d.domain, selector: d.selector })),
    dmarc: { result: dmarc.result, domain: dmarc.domain, policy: dmarc.policy },
    arc: { result: arc.result },
  };
}
