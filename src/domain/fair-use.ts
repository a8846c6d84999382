import { clientKey, clientNetwork } from './client-key.js';

/**
 * Fair-use limits (docs/api.md "Fair use"; defaults documented in docs/api.md). Each rule is
 * a named budget per key per window; the numbers are chosen so that a person or a CI job
 * polling every second never meets them, while a script hammering a public node does.
 */
export interface FairUseRule {
  name: string;
  points: number;
  durationSeconds: number;
  /**
   * What the key of a check is: a client address (counted per clientKey: the IPv4 address or
   * the IPv6 /64), a client address counted per its network (clientNetwork: IPv4 /24, IPv6
   * /64), or an opaque key used as given (a session id).
   */
  per: 'client' | 'network' | 'session';
}

/** The counter key of a check under a rule: client addresses reduced to their client or network. */
export function fairUseKey(rule: FairUseRule, key: string): string {
  if (rule.per === 'client') return clientKey(key);
  if (rule.per === 'network') return clientNetwork(key);
  return key;
}

/** New inboxes per client address: a CI pipeline creating one per test job stays well under. */
export const CREATE_PER_ADDRESS: FairUseRule = { name: 'create_ip', points: 30, durationSeconds: 600, per: 'client' };
/** New inboxes per session (premium sessions create several; free ones reuse theirs). */
export const CREATE_PER_SESSION: FairUseRule = { name: 'create_session', points: 20, durationSeconds: 600, per: 'session' };
/** Polls per session: two a second on average over a minute. */
export const CHECK_PER_SESSION: FairUseRule = { name: 'check_session', points: 120, durationSeconds: 60, per: 'session' };
/** Polls per client address: several sessions behind one NAT, ten a second in total. */
export const CHECK_PER_ADDRESS: FairUseRule = { name: 'check_ip', points: 600, durationSeconds: 60, per: 'client' };
/** Failed license redeems per client address: brute force gets 10 guesses an hour. */
export const FAILED_REDEEM_PER_ADDRESS: FairUseRule = { name: 'redeem_fail_ip', points: 10, durationSeconds: 3600, per: 'client' };
/** Every other API call per client address (message reads, deletes, session, 404s). */
export const API_PER_ADDRESS: FairUseRule = { name: 'api_ip', points: 1200, durationSeconds: 60, per: 'client' };

/**
 * Refused recipients (550 5.1.1 unknown, 550 5.7.1 relay) per client network: a sender with
 * a typo or a stale list meets a few, while listing which names exist needs thousands; 60 per
 * 10 minutes lets a whole /24 of legitimate senders bounce now and then and stops enumeration.
 */
export const SMTP_REFUSED_RECIPIENTS_PER_NETWORK: FairUseRule = { name: 'smtp_refused_net', points: 60, durationSeconds: 600, per: 'network' };

/**
 * Simultaneous SMTP connections per client (clientKey: IPv4 address, IPv6 /64): large senders
 * open a handful per destination, so 20 never slows real mail, while one host cannot take all
 * MAX_CLIENTS slots.
 */
export const SMTP_CONNECTIONS_PER_ADDRESS = 20;
