import type { Selectable } from 'kysely';
import type { Inbox, License, MailHeader, Session } from '../../domain/types.js';
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

/** An inboxes row as the domain record. */
export function toInbox(row: Selectable<InboxesTable>): Inbox {
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
