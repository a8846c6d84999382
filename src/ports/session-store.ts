import type { Inbox, License, LicenseUsage, Session } from '../domain/types.js';
import type { InsertInboxResult } from './inbox-store.js';

/** What redeemLicense did: set the license on the session, found it already set, or refused it. */
export type RedeemStatus = 'redeemed' | 'already_redeemed' | 'session_limit' | 'no_license';

/** The limits redeemLicense applies while it counts. */
export interface RedeemRules {
  /** Most active inboxes of the license; adoption stops there. */
  maxInboxes: number;
  /** An adopted inbox expires at its created_at plus this. */
  premiumTtlMs: number;
}

/** Sessions and the licenses they redeem (SessionService, LicenseService). */
export interface SessionStore {
  insertSession(session: Session): Promise<void>;
  /** The session whose token hash matches and whose expires_at is after `now`, else null. */
  findSession(tokenHash: string, now: Date): Promise<Session | null>;
  /**
   * Stores a new session and its first inbox in one transaction (insertInbox's rules for the
   * inbox). `taken` stores neither: the caller tries again with another name.
   */
  insertSessionWithInbox(session: Session, inbox: Inbox, now: Date): Promise<InsertInboxResult>;
  /** Extends a session's cookie lifetime. */
  renewSession(sessionId: string, expiresAt: Date): Promise<void>;
  /**
   * Redeems a license for a session in one transaction that counts and writes (the license
   * row locked on PostgreSQL): unless the session already holds it, refuses with
   * `session_limit` when `max_sessions` unexpired sessions hold it, else sets it on the
   * session. Then adopts the session's active free inboxes while the license has fewer than
   * `rules.maxInboxes` active ones. `no_license` when the license or session does not exist.
   */
  redeemLicense(sessionId: string, licenseId: string, now: Date, rules: RedeemRules): Promise<RedeemStatus>;
  insertLicenses(licenses: License[]): Promise<void>;
  findLicenseByKeyHash(keyHash: string): Promise<License | null>;
  findLicenseById(licenseId: string): Promise<License | null>;
  /** Every license, oldest first, with its usage at `now`. */
  listLicenses(now: Date): Promise<LicenseUsage[]>;
  /** Marks a license revoked; false when no license has that key hash. */
  revokeLicense(keyHash: string, at: Date): Promise<boolean>;
}
