import type { License } from './types.js';

/** Numbers that differ between the free and premium modes; from the config. */
export interface PlanSettings {
  freeTtlSeconds: number;
  premiumTtlSeconds: number;
  premiumMaxInboxes: number;
  freeMaxMessages: number;
  premiumMaxMessages: number;
  /** Raw bytes a free inbox holds (FREE_MAX_BYTES). */
  freeMaxBytes: number;
  /** Raw bytes a premium inbox holds (PREMIUM_MAX_BYTES). */
  premiumMaxBytes: number;
}

/** Limits a session has now, as reported by redeem and GET /api/session. */
export interface PlanLimits {
  max_inboxes: number;
  ttl: number;
  custom_usernames: boolean;
}

/** A free session holds one active inbox at a time: create reuses it. */
export const FREE_MAX_INBOXES = 1;

/** True when the license gives premium at `now` (not revoked, not past validity). */
export function isLicenseActive(license: License | null, now: Date): license is License {
  return license !== null && license.revokedAt === null && now.getTime() < license.validUntil.getTime();
}

/** The limits of a session in free or premium mode. */
export function planLimits(settings: PlanSettings, premium: boolean): PlanLimits {
  return premium
    ? { max_inboxes: settings.premiumMaxInboxes, ttl: settings.premiumTtlSeconds, custom_usernames: true }
    : { max_inboxes: FREE_MAX_INBOXES, ttl: settings.freeTtlSeconds, custom_usernames: false };
}

/** Expiry of an inbox created at `createdAt` in the given mode. */
export function inboxExpiry(settings: PlanSettings, createdAt: Date, premium: boolean): Date {
  const ttl = premium ? settings.premiumTtlSeconds : settings.freeTtlSeconds;
  return new Date(createdAt.getTime() + ttl * 1000);
}

/** How many messages an inbox holds before SMTP answers 452 (premium = owned by a license). */
export function messageCap(settings: PlanSettings, licenseOwned: boolean): number {
  return licenseOwned ? settings.premiumMaxMessages : settings.freeMaxMessages;
}

/** How many raw bytes an inbox holds before SMTP answers 452 (premium = owned by a license). */
export function byteCap(settings: PlanSettings, licenseOwned: boolean): number {
  return licenseOwned ? settings.premiumMaxBytes : settings.freeMaxBytes;
}

/**
 * Whether an inbox holding `messages` messages of `bytes` raw bytes in all takes one more of
 * `size` bytes without passing its caps. A message bigger than the whole byte cap never fits.
 */
export function fitsCaps(usage: { messages: number; bytes: number }, size: number, caps: { maxMessages: number; maxBytes: number }): boolean {
  return usage.messages + 1 <= caps.maxMessages && usage.bytes + size <= caps.maxBytes;
}

/** What a message does in one of its inboxes when it is stored. */
export type CopyVerdict = 'store' | 'full' | 'expired' | 'missing';

/**
 * The store-time rule of a delivery, for one inbox (docs/api.md "Limits"): a copy goes to an
 * inbox that exists, is active at `now` (ms) and has room for `size` more bytes under its
 * plan's quota. `usage` null: the inbox has no quota (the postmaster inbox). Every store's
 * delivery path asks this, so they cannot drift apart.
 */
export function copyVerdict(
  inbox: { expiresAt: number; licensed: boolean } | undefined,
  now: number,
  usage: { messages: number; bytes: number } | null,
  size: number,
  quotas: { free: { maxMessages: number; maxBytes: number }; premium: { maxMessages: number; maxBytes: number } },
): CopyVerdict {
  if (inbox === undefined) return 'missing';
  if (inbox.expiresAt <= now) return 'expired';
  if (usage === null) return 'store';
  return fitsCaps(usage, size, inbox.licensed ? quotas.premium : quotas.free) ? 'store' : 'full';
}

/** An inbox is active while now < expires_at (docs/api.md "Expiry"). */
export function isInboxActive(expiresAt: Date, now: Date): boolean {
  return now.getTime() < expiresAt.getTime();
}
