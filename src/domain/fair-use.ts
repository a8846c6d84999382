/**
 * Fair-use limits (contract §2 "Fair use"; defaults documented in docs/api.md). Each rule is
 * a named budget per key per window; the numbers are chosen so that a person or a CI job
 * polling every second never meets them, while a script hammering a public node does.
 */
export interface FairUseRule {
  name: string;
  points: number;
  durationSeconds: number;
}

/** New inboxes per client address: a CI pipeline creating one per test job stays well under. */
export const CREATE_PER_ADDRESS: FairUseRule = { name: 'create_ip', points: 30, durationSeconds: 600 };
/** New inboxes per session (premium sessions create several; free ones reuse theirs). */
export const CREATE_PER_SESSION: FairUseRule = { name: 'create_session', points: 20, durationSeconds: 600 };
/** Polls per session: two a second on average over a minute. */
export const CHECK_PER_SESSION: FairUseRule = { name: 'check_session', points: 120, durationSeconds: 60 };
/** Polls per client address: several sessions behind one NAT, ten a second in total. */
export const CHECK_PER_ADDRESS: FairUseRule = { name: 'check_ip', points: 600, durationSeconds: 60 };
/** Failed license redeems per client address: brute force gets 10 guesses an hour. */
export const FAILED_REDEEM_PER_ADDRESS: FairUseRule = { name: 'redeem_fail_ip', points: 10, durationSeconds: 3600 };
/** Every other API call per client address (message reads, deletes, session, 404s). */
export const API_PER_ADDRESS: FairUseRule = { name: 'api_ip', points: 1200, durationSeconds: 60 };

/**
 * Simultaneous SMTP connections per client address: large senders open a handful per
 * destination, so 20 never slows real mail, while one host cannot take all MAX_CLIENTS slots.
 */
export const SMTP_CONNECTIONS_PER_ADDRESS = 20;
