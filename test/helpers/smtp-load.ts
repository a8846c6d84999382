import nodemailer from 'nodemailer';

/** What an SMTP load run saw: the subjects answered 250, and how many sends were tried. */
export interface SmtpLoadResult {
  acknowledged: Set<string>;
  attempts: number;
}

/** A running SMTP load: its live tally, and a way to end it once the server is gone. */
export interface SmtpLoad {
  readonly acknowledged: Set<string>;
  /** Resolves once at least `count` messages were answered 250, or after `timeoutMs`. */
  waitForAcks(count: number, timeoutMs: number): Promise<void>;
  /** Stops every sender after its current message and resolves with the tally. */
  finish(): Promise<SmtpLoadResult>;
}

/**
 * Sends to `to` from `connections` parallel senders (one pooled connection each, at most
 * `maxPerSender` messages each) with unique subjects, recording each one answered 250. A
 * sender stops at its first failure: once the server is killed, nothing more is acknowledged.
 * For the kill -9 tests: every subject in `acknowledged` must be readable afterwards.
 */
export function startSmtpLoad(options: { port: number; to: string; connections: number; maxPerSender: number }): SmtpLoad {
  const acknowledged = new Set<string>();
  let attempts = 0;
  let stop = false;
  const sender = async (index: number): Promise<void> => {
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: options.port, ignoreTLS: true, pool: true, maxConnections: 1, socketTimeout: 5000 });
    for (let i = 0; i < options.maxPerSender && !stop; i += 1) {
      const subject = `load-${index}-${i}`;
      attempts += 1;
      try {
        const info = await transport.sendMail({ from: 'load@example.org', to: options.to, subject, text: `payload ${subject}` });
        if (info.response.startsWith('250')) acknowledged.add(subject);
      } catch {
        break; // the server is gone: this message was never acknowledged
      }
    }
    transport.close();
  };
  const senders = Array.from({ length: options.connections }, (_, i) => sender(i));
  return {
    acknowledged,
    async waitForAcks(count, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (acknowledged.size < count && Date.now() < deadline) await new Promise((done) => setTimeout(done, 20));
    },
    async finish() {
      stop = true;
      await Promise.all(senders);
      return { acknowledged, attempts };
    },
  };
}
