/** The client's bounds: every wait has a deadline, every loop a count, every buffer a size. */

/** A wait's timeout when none is given: long enough for a slow mail provider in CI. */
export const DEFAULT_WAIT_TIMEOUT_MS = 60_000;

/** The longest `wait` the server holds a check for (docs/api.md "Waiting for mail"). */
export const SERVER_MAX_WAIT_SECONDS = 60;

/** Messages per check page: the server's maximum `limit`, so a free inbox fits one page. */
export const PAGE_LIMIT = 100;

/**
 * Pages one listing may read (10,000 messages): ten times the default Premium inbox cap, so
 * only a server configured far beyond it can make a listing stop early (it then fails).
 */
export const MAX_PAGES = 100;

/** One request without `wait` that takes longer than this is given up (and retried where allowed). */
export const REQUEST_TIMEOUT_MS = 30_000;

/**
 * Slack past a held check's `wait` before the client gives up on it: the server answers at
 * its `wait`, so only a stalled connection needs this.
 */
export const HELD_REQUEST_SLACK_MS = 10_000;

/** Retries of a call that is not a wait, after 429, 503 or a network error. */
export const MAX_RETRIES = 3;

/** First backoff when the server gave no `Retry-After`; doubled each time up to the cap. */
export const BACKOFF_START_MS = 250;
export const BACKOFF_MAX_MS = 5_000;

/** A `Retry-After` longer than this is not waited out by a call that is not a wait: it fails at once. */
export const MAX_RETRY_AFTER_MS = 60_000;

/**
 * Least time between two held checks of one wait that came back empty: the server holds each
 * for its `wait`, so an early empty answer (the server draining, a proxy) must not become a
 * busy loop.
 */
export const MIN_HELD_INTERVAL_MS = 1_000;

/** An event stream that sent nothing, not even its ping (at most 15 s apart), for this long is dead. */
export const STREAM_IDLE_TIMEOUT_MS = 45_000;

/** Reconnects of `follow` in a row that fail before it gives up with the last error. */
export const MAX_STREAM_RECONNECTS = 10;

/** Characters of one event-stream event at most: a cut message (2 × 256 KiB, escaped) with room. */
export const MAX_EVENT_CHARS = 16 * 1024 * 1024;

/** Message ids `follow` remembers to never yield one twice (a replay after a reconnect). */
export const FOLLOW_SEEN_IDS = 10_000;
