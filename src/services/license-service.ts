import type { Clock } from '../domain/clock.js';
import { AppError } from '../domain/errors.js';
import { FAILED_REDEEM_PER_ADDRESS } from '../domain/fair-use.js';
import { hashSecret, newId } from '../domain/ids.js';
import { isWellFormedLicenseKey, newLicenseKey, normalizeLicenseKey } from '../domain/license-key.js';
import { isLicenseActive, planLimits, type PlanLimits, type PlanSettings } from '../domain/plan.js';
import type { License, LicenseUsage, Session } from '../domain/types.js';
import type { InboxEvents } from '../ports/inbox-events.js';
import type { SessionStore } from '../ports/session-store.js';
import type { FairUseService } from './fair-use-service.js';

/** A license is good for 5 devices (sessions) unless minted otherwise (docs/api.md). */
export const DEFAULT_MAX_SESSIONS = 5;
/** Default validity of a minted license. */
export const DEFAULT_LICENSE_DAYS = 30;

/** What a successful redeem reports. */
export interface RedeemResult {
  premiumUntil: Date;
  limits: PlanLimits;
}

/** Dependencies of the license use cases. */
export interface LicenseServiceDeps {
  store: SessionStore;
  clock: Clock;
  fairUse: FairUseService;
  plan: PlanSettings;
  /**
   * Told when a redeem or a revocation may have changed which inboxes a session reads, so
   * that held requests check their access again (optional in unit tests).
   */
  events?: InboxEvents;
}

/** Minting, listing, revoking and redeeming Premium licenses. */
export class LicenseService {
  constructor(private readonly deps: LicenseServiceDeps) {}

  /** Mints `count` keys; returns the keys, which exist nowhere else afterwards (only hashes are stored). */
  async mint(options: { count: number; days: number; maxSessions: number }): Promise<string[]> {
    const now = this.deps.clock.now();
    const keys: string[] = [];
    const licenses: License[] = [];
    for (let i = 0; i < options.count; i += 1) {
      const key = newLicenseKey();
      keys.push(key);
      licenses.push({
        id: newId(),
        keyHash: hashSecret(key),
        createdAt: now,
        validUntil: new Date(now.getTime() + options.days * 86_400_000),
        maxSessions: options.maxSessions,
        revokedAt: null,
      });
    }
    await this.deps.store.insertLicenses(licenses);
    return keys;
  }

  /** Every license with its usage. */
  async list(): Promise<LicenseUsage[]> {
    return this.deps.store.listLicenses(this.deps.clock.now());
  }

  /** Revokes by key; false when no such key. */
  async revoke(key: string): Promise<boolean> {
    const revoked = await this.deps.store.revokeLicense(hashSecret(normalizeLicenseKey(key)), this.deps.clock.now());
    if (revoked) this.deps.events?.publish({ type: 'access' });
    return revoked;
  }

  /**
   * POST /api/premium/redeem. Every failure counts against the client address; once its
   * budget is spent, even a good key is refused until the window passes (brute force).
   */
  async redeem(session: Session, rawKey: string, clientAddress: string): Promise<RedeemResult> {
    const { fairUse } = this.deps;
    await fairUse.assertNotExhausted(FAILED_REDEEM_PER_ADDRESS, clientAddress);
    try {
      return await this.redeemChecked(session, rawKey);
    } catch (error) {
      if (error instanceof AppError && error.code.startsWith('license_')) {
        await fairUse.recordFailure(FAILED_REDEEM_PER_ADDRESS, clientAddress);
      }
      throw error;
    }
  }

  private async redeemChecked(session: Session, rawKey: string): Promise<RedeemResult> {
    const { store, clock, plan } = this.deps;
    const now = clock.now();
    const key = normalizeLicenseKey(rawKey);
    const license = isWellFormedLicenseKey(key) ? await store.findLicenseByKeyHash(hashSecret(key)) : null;
    // Unknown, malformed and revoked keys get one answer, so a revoked key is not confirmed.
    if (license === null || license.revokedAt !== null) throw new AppError('license_invalid');
    if (!isLicenseActive(license, now)) throw new AppError('license_expired');

    // One store transaction counts the license's sessions and sets it on this one, then
    // adopts the session's active free inbox (retained for the premium TTL from its
    // creation) unless the license is at its inbox maximum: then the inbox stays a free one
    // of this session, still readable, with its expiry.
    const status = await store.redeemLicense(session.id, license.id, now, {
      maxInboxes: plan.premiumMaxInboxes,
      premiumTtlMs: plan.premiumTtlSeconds * 1000,
    });
    if (status === 'session_limit') throw new AppError('license_session_limit');
    // The session or license vanished between the lookup and the write (swept or never stored).
    if (status === 'no_license') throw new AppError('license_invalid');
    session.licenseId = license.id;
    this.deps.events?.publish({ type: 'access' });
    return { premiumUntil: license.validUntil, limits: planLimits(plan, true) };
  }
}
