/** Bounds of long-polls and event streams (docs/api.md "Waiting for mail" and "Event stream"). */

/** Longest `wait` of a check: a minute stays under the idle timeouts of common proxies and load balancers. */
export const MAX_WAIT_SECONDS = 60;

/** Held requests (waits and streams together) of one session: a page with a few tabs, or a test run's workers. */
export const HELD_PER_SESSION = 10;

/** Held requests of one client address (IPv4, IPv6 /64): a whole office or CI runner behind one NAT. */
export const HELD_PER_CLIENT = 100;

/**
 * Held requests of one node in all: each costs a socket, a subscription and a few KiB; 20,000
 * is twice the benchmark's 10,000 and well within one process's file descriptors and memory.
 */
export const HELD_PER_NODE = 20_000;

/** A `: ping` comment this often: under the 15 s the stream promises, with room for a busy loop. */
export const STREAM_PING_MS = 10_000;

/**
 * How often the node's one ping sweep looks at its streams (services/stream-pinger.ts): a
 * ping then goes out 10 to 11 s after a stream's last write, under the 15 s promised. A sweep
 * visits every open stream (at most HELD_PER_NODE; 10,000 take well under a millisecond).
 */
export const STREAM_PING_SWEEP_MS = 1_000;

/**
 * Messages a stream reads at a time: two, so that the usual wake-up (one new message) takes
 * one read that shows nothing more is there. A stream writes the next message only once its
 * client took the previous one (http/sse-writer.ts), so a client that stops reading pins this
 * page (each `body` and `html` cut at 256 KiB) and the bytes of one message: about 1.6 MB for
 * the largest ordinary mail, never a page of 100 large messages. Catching up costs a read per
 * two messages, shared by the inbox's streams.
 */
export const STREAM_READ_PAGE = 2;

/**
 * Bytes an event stream may have waiting for its client (its response's and socket's
 * buffers); past it the client is dropped (it reconnects with Last-Event-ID and misses
 * nothing). A stream writes only into a drained buffer, so this is reached only by a frame
 * larger than any listed message can make (two fields of 256 KiB, JSON-escaped) or by a
 * flood of pings and deletions. A client that takes nothing at all is dropped by the HTTP
 * server's stall rule (http/stall-guard.ts) after a minute.
 */
export const STREAM_MAX_QUEUED_BYTES = 4 * 1024 * 1024;

/**
 * Bytes of JSON a held check answers at most (a check answers up to 8 MiB): a client that
 * waited and then reads nothing pins its answer until the stall rule drops it, and a client
 * that stops reading pins at most 4 MiB. `has_more` tells the rest, read with `before`.
 */
export const HELD_ANSWER_MAX_BYTES = 4 * 1024 * 1024;

/** Deletions a stream holds for a client that is not reading; past it the stream is closed. */
export const STREAM_MAX_PENDING_DELETES = 1000;

/**
 * Recently sent ids a stream remembers: when the message it last sent is deleted, it resumes
 * after the newest of these still there instead of replaying the inbox.
 */
export const STREAM_CURSOR_FALLBACKS = 32;

/** Longest setTimeout (2^31 − 1 ms, ~24.8 days): an expiry further away is re-armed. */
export const MAX_TIMER_MS = 2_147_483_647;
