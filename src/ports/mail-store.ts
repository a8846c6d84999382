import type { InboxStore } from './inbox-store.js';
import type { MessageReads } from './message-reads.js';
import type { MessageWrites } from './message-writes.js';
import type { SessionStore } from './session-store.js';
import type { StoreMaintenance } from './store-maintenance.js';

export type * from './inbox-store.js';
export type * from './message-reads.js';
export type * from './message-writes.js';
export type * from './session-store.js';
export type * from './store-maintenance.js';
export { hasFilter, IDS, VIEWS } from './message-reads.js';

/**
 * Everything the services persist, as the ports of its roles: sessions and licenses
 * (SessionStore), inboxes (InboxStore), message writes (MessageWrites), message reads
 * (MessageReads) and the store's upkeep (StoreMaintenance). A service names the roles it uses;
 * one object implements them all, built once by the composition root (app.ts). One contract
 * suite (test/contract/mail-store-contract.ts) runs against every implementation: the
 * in-memory fake and the SQL store (SQLite, PostgreSQL).
 *
 * Conventions:
 * - Dates in, Dates out; ids are made by the caller (domain/ids.ts), never by the store.
 * - Methods that read "active" data take `now`; the store never reads a clock.
 * - Each invariant (quotas, limits, name clashes) is decided by one store operation, inside
 *   the transaction that writes.
 * - A failure of the backend itself is thrown by cause (docs/api.md "Errors"): the database
 *   cannot be reached → StoreUnavailableError; its disk is full → StoreFullError; anything
 *   else (a SQL bug, a constraint nobody expected) → StoreFailureError.
 */
export interface MailStore extends SessionStore, InboxStore, MessageWrites, MessageReads, StoreMaintenance {}

/** Thrown by a store when the database cannot be reached (HTTP 503, SMTP 451 4.3.0): retry later. */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/** Thrown by a store when the database's disk is full (HTTP 507, SMTP 452 4.3.1): retry once space returns. */
export class StoreFullError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreFullError';
  }
}

/**
 * Thrown by a store for any other backend failure: a bug of ours (HTTP 500 internal_error,
 * logged with its cause; SMTP 451 4.3.0), never reported as an outage.
 */
export class StoreFailureError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreFailureError';
  }
}
