/**
 * The bounds of one `GET /api/check` answer (docs/api.md, check). They keep a poll's memory,
 * database reads and event-loop time bounded whatever an inbox holds: anyone who knows an
 * address can fill it with 100 messages of 10 MiB.
 */

/** Messages per answer by default and at most: the free message cap, so a free inbox fits one page. */
export const CHECK_MAX_LIMIT = 100;

/**
 * Bytes of UTF-8 kept of each listed message's `body` and `html`. 256 KiB shows any real
 * message in full (a long newsletter's HTML is ~100 KB); the detail route has the whole text.
 */
export const CHECK_FIELD_BYTES = 256 * 1024;

/**
 * Bytes of JSON of one answer at most: at least 16 messages cut at CHECK_FIELD_BYTES in both
 * fields fit, and a client (a browser tab, a CI script) parses it in tens of milliseconds.
 */
export const CHECK_BUDGET_BYTES = 8 * 1024 * 1024;

/** Room kept in the budget for the answer's envelope (`success`, `count`, `has_more`, brackets). */
export const CHECK_ENVELOPE_BYTES = 1024;

/**
 * Messages read from the store per statement. SQLite runs on the event loop and loads a body
 * whole before substr cuts it (measured: 2-8 ms per 2 MB body, more on a loaded machine), so
 * one statement of 5 stays far under the 100 ms event-loop budget even for the largest
 * messages; a page of 100 small ones still takes only 21 round trips of well under 1 ms.
 */
export const CHECK_READ_BATCH = 5;
