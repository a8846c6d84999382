import { pino, type Logger } from 'pino';
import type { Config } from '../config/schema.js';

/**
 * Most log bytes held in memory while stdout does not take them (a stuck log shipper, a full
 * pipe). Past it, lines are dropped (and the drop is counted by sonic-boom's `drop` event)
 * rather than the process growing without bound or blocking: at ~300 B a line it is about
 * 50,000 lines, minutes of a busy node's log.
 */
export const MAX_BUFFERED_LOG_BYTES = 16 * 1024 * 1024;

/**
 * Lines are gathered until this many bytes are buffered (or LOG_FLUSH_INTERVAL_MS passed)
 * and written together: at ~300 B a line, one write for a dozen accepted messages instead of
 * a write per message (each one a system call in the thread pool, and a call into it from the
 * event loop).
 */
export const LOG_BATCH_BYTES = 4096;

/**
 * Longest time a line waits in the buffer when fewer than LOG_BATCH_BYTES come: a quiet
 * node's lines still reach the log within a tenth of a second.
 */
export const LOG_FLUSH_INTERVAL_MS = 100;

/**
 * JSON logs on stdout (one object per line). Cookies and message content are never logged:
 * request logging is ours (no headers), and redaction catches accidental cookie fields.
 *
 * Written asynchronously (docs/architecture.md "Logging"): process.stdout writes to a pipe
 * or a file synchronously, so one line per accepted message cost the event loop a write
 * system call, and a reader that stopped reading stopped the whole process. sonic-boom
 * (pino's own destination) gathers the lines and writes them off the event loop; pino
 * flushes what is left synchronously when the process exits. Lines are written in batches of
 * LOG_BATCH_BYTES, or after LOG_FLUSH_INTERVAL_MS at the latest.
 */
export function createLogger(level: Config['logLevel'], destination?: NodeJS.WritableStream): Logger {
  const stdout =
    destination === undefined
      ? pino.destination({
          dest: 1,
          sync: false,
          minLength: LOG_BATCH_BYTES,
          periodicFlush: LOG_FLUSH_INTERVAL_MS,
          maxLength: MAX_BUFFERED_LOG_BYTES,
        })
      : undefined;
  const logger = pino(
    {
      level,
      base: { service: 'tempinbox' },
      redact: { paths: ['req.headers.cookie', 'res.headers["set-cookie"]', 'cookie', 'token', 'key'], censor: '[redacted]' },
    },
    destination ?? stdout,
  );
  if (stdout !== undefined) destinations.set(logger, stdout);
  return logger;
}

/**
 * Longest wait at shutdown for the log lines still buffered to be written. A reader that is
 * reading takes them in milliseconds; one that stopped must not keep the process from exiting
 * (what is left then is lost, as it would be with any writer whose reader is gone).
 */
export const LOG_FLUSH_TIMEOUT_MS = 2000;

/** How often flushLogger looks whether the buffer is empty yet. */
const LOG_FLUSH_POLL_MS = 10;

type Destination = ReturnType<typeof pino.destination>;

/** The asynchronous destination of each logger createLogger made for stdout. */
const destinations = new WeakMap<Logger, Destination>();

/** True while sonic-boom holds bytes not yet written, or has a write in flight. */
function holdsBytes(destination: Destination): boolean {
  // sonic-boom 4 has no public "is everything written" signal: its `drain` event fires below
  // the high-water mark, not at empty. These two fields are what its own flushSync reads.
  const state = destination as unknown as { _len?: number; _writing?: boolean };
  return (state._len ?? 0) > 0 || state._writing === true;
}

/**
 * Waits until every buffered line is written, at most `timeoutMs`. Call before process.exit.
 * Needed because of sonic-boom 4.2.1: when a write met a full, non-blocking pipe (EAGAIN) and
 * waits to be retried, the synchronous flush pino runs at exit skips that write's bytes, and
 * those lines are lost (test/e2e/log-backpressure.test.ts loses one without this wait).
 */
export async function flushLogger(logger: Logger, timeoutMs = LOG_FLUSH_TIMEOUT_MS): Promise<void> {
  const destination = destinations.get(logger);
  if (destination === undefined) return;
  const deadline = Date.now() + timeoutMs;
  destination.flush();
  while (holdsBytes(destination) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, LOG_FLUSH_POLL_MS));
  }
}
