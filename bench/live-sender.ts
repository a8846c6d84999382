import nodemailer from 'nodemailer';
import type { BenchInbox } from './api-client.js';
import { buildMessage } from './smtp-client.js';

/**
 * The paced SMTP sender of the live-mail figure (docs/benchmarks.md, figure 8): `rate`
 * messages/s to random inboxes for `seconds`, over a few SMTP connections that each carry
 * many messages. One message per connection would pay smtp-server's 100 ms greeting delay
 * each time and could not reach 100 messages/s on a loaded machine.
 */

/**
 * SMTP connections kept open. A message takes 10–40 ms on one (the commit's fsync, the parse
 * worker, a shared machine), so 10 carry 100/s with room for stalls.
 */
const SMTP_CONNECTIONS = 10;
/** Message size: a short sign-up mail, the common case of waiting for mail. */
const MESSAGE_BYTES = 2048;
/** Sender address of the bench messages. */
const FROM = 'bench@example.org';

/** What was sent: when the 250 of each subject arrived (performance.now()). */
export interface SendResult {
  ackedAt: Map<string, number>;
  sent: number;
  failed: number;
  /** Seconds from the first send to the last 250. */
  elapsed: number;
}

/**
 * Sends `rate` messages/s for `seconds` to random inboxes of `inboxes`, subjects
 * `bench-<n>`; message n is started at n/rate s (never in a burst to catch up).
 */
export async function sendPaced(smtpPort: number, inboxes: readonly BenchInbox[], rate: number, seconds: number): Promise<SendResult> {
  const transport = nodemailer.createTransport({
    pool: true,
    host: '127.0.0.1',
    port: smtpPort,
    secure: false,
    ignoreTLS: true,
    name: 'bench.example',
    maxConnections: SMTP_CONNECTIONS,
    // Never reconnect: a new connection waits 100 ms for its greeting.
    maxMessages: Number.POSITIVE_INFINITY,
  });
  const ackedAt = new Map<string, number>();
  let failed = 0;
  const total = Math.round(rate * seconds);
  const started = performance.now();
  let last = started;
  const sends: Promise<void>[] = [];
  try {
    for (let n = 0; n < total; n += 1) {
      const due = started + (n * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const subject = `bench-${n}`;
      const inbox = inboxes[Math.floor(Math.random() * inboxes.length)] as BenchInbox;
      sends.push(
        transport.sendMail({ envelope: { from: FROM, to: [inbox.email] }, raw: buildMessage(FROM, inbox.email, subject, MESSAGE_BYTES) }).then(
          () => {
            last = performance.now();
            ackedAt.set(subject, last);
          },
          () => {
            failed += 1;
          },
        ),
      );
    }
    await Promise.all(sends);
  } finally {
    transport.close();
  }
  return { ackedAt, sent: ackedAt.size, failed, elapsed: (last - started) / 1000 };
}
