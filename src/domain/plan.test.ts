import { describe, expect, it } from 'vitest';
import { copyVerdict, inboxExpiry, isInboxActive, isLicenseActive, messageCap, planLimits, type PlanSettings } from './plan.js';
import type { License } from './types.js';

const settings: PlanSettings = { freeTtlSeconds: 1800, premiumTtlSeconds: 2_592_000, premiumMaxInboxes: 10, freeMaxMessages: 100, premiumMaxMessages: 1000, freeMaxBytes: 52_428_800, premiumMaxBytes: 524_288_000 };
const t0 = new Date(Date.UTC(2026, 0, 1));

describe('plan limits', () => {
  it('gives free inboxes 30 minutes and premium ones 30 days', () => {
    expect(inboxExpiry(settings, t0, false).getTime() - t0.getTime()).toBe(1800 * 1000);
    expect(inboxExpiry(settings, t0, true).getTime() - t0.getTime()).toBe(30 * 86_400 * 1000);
  });

  it('reports the limits of each mode', () => {
    expect(planLimits(settings, false)).toEqual({ max_inboxes: 1, ttl: 1800, custom_usernames: false });
    expect(planLimits(settings, true)).toEqual({ max_inboxes: 10, ttl: 2_592_000, custom_usernames: true });
  });

  it('caps messages by ownership', () => {
    expect(messageCap(settings, false)).toBe(100);
    expect(messageCap(settings, true)).toBe(1000);
  });

  it('treats an inbox as active strictly before expires_at', () => {
    const expiry = new Date(t0.getTime() + 1000);
    expect(isInboxActive(expiry, new Date(t0.getTime() + 999))).toBe(true);
    expect(isInboxActive(expiry, expiry)).toBe(false);
  });
});

describe('license validity', () => {
  const license: License = { id: 'l', keyHash: 'h', createdAt: t0, validUntil: new Date(t0.getTime() + 10_000), maxSessions: 5, revokedAt: null };

  it('is active until valid_until, not after', () => {
    expect(isLicenseActive(license, new Date(t0.getTime() + 9_999))).toBe(true);
    expect(isLicenseActive(license, new Date(t0.getTime() + 10_000))).toBe(false);
  });

  it('is inactive once revoked or absent', () => {
    expect(isLicenseActive({ ...license, revokedAt: t0 }, t0)).toBe(false);
    expect(isLicenseActive(null, t0)).toBe(false);
  });
});

describe('copyVerdict (the store-time rule every store applies)', () => {
  const quotas = { free: { maxMessages: 2, maxBytes: 100 }, premium: { maxMessages: 5, maxBytes: 1000 } };
  const now = 1_000;
  const free = { expiresAt: 2_000, licensed: false };

  it('stores into an active inbox with room, and into an unlimited one whatever it holds', () => {
    expect(copyVerdict(free, now, { messages: 1, bytes: 50 }, 50, quotas)).toBe('store');
    expect(copyVerdict(free, now, null, 10_000, quotas)).toBe('store');
  });

  it('is full at the plan’s message or byte cap; a licensed inbox has the premium quota', () => {
    expect(copyVerdict(free, now, { messages: 2, bytes: 0 }, 1, quotas)).toBe('full');
    expect(copyVerdict(free, now, { messages: 0, bytes: 60 }, 41, quotas)).toBe('full');
    expect(copyVerdict({ ...free, licensed: true }, now, { messages: 2, bytes: 60 }, 41, quotas)).toBe('store');
  });

  it('is expired at expires_at and missing without an inbox, before any quota', () => {
    expect(copyVerdict({ ...free, expiresAt: now }, now, { messages: 0, bytes: 0 }, 1, quotas)).toBe('expired');
    expect(copyVerdict(undefined, now, null, 1, quotas)).toBe('missing');
  });
});
