/**
 * The whole time one delivery attempt may take, from the look-up to the end of the response:
 * a receiver that has not answered 2xx by then has failed this attempt. Ten seconds is what
 * the answer to a webhook needs (receivers queue their work and answer at once), and it bounds
 * how long a dead receiver holds one of the node's WEBHOOK_CONCURRENCY slots.
 */
export const WEBHOOK_ATTEMPT_DEADLINE_MS = 10_000;

/**
 * Bytes of a response body read at most; then the connection is closed. Nothing of the body is
 * kept (only the status decides), so this bounds the time and bandwidth a receiver sending
 * without end can take, not memory; one more socket read (at most 64 KiB) may arrive with it.
 */
export const WEBHOOK_RESPONSE_CAP_BYTES = 64 * 1024;

/**
 * Addresses of a host tried in turn when connecting fails (refused, unreachable): a second
 * address rescues a host whose first is down or whose IPv6 this node cannot reach, and all of
 * them share the attempt's deadline.
 */
export const WEBHOOK_MAX_ADDRESSES_TRIED = 3;

/** Longest error text kept for an attempt: enough for a code and Node's sentence, bounded for the record. */
export const WEBHOOK_ERROR_MAX_LENGTH = 200;
