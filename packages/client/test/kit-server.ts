import nodemailer from 'nodemailer';
import { sendRawSmtp } from '../../../test/helpers/send-raw-smtp.js';
import { startServer, tempDataDir, type ServerProcess } from '../../../test/helpers/server-process.js';

/** A started server with its SQLite folder, and a way to stop both. */
export interface KitServer {
  server: ServerProcess;
  /** The DATABASE_URL the server runs on (for `tempinbox license create` beside it). */
  databaseUrl: string;
  close: () => Promise<void>;
}

/** Starts `dist/main.js serve` on port 0 with a fresh SQLite file (or the given DATABASE_URL). */
export async function startKitServer(env: Record<string, string> = {}): Promise<KitServer> {
  const data = tempDataDir();
  const databaseUrl = env.DATABASE_URL ?? data.databaseUrl;
  const server = await startServer({ DATABASE_URL: databaseUrl, ...env }, 30_000);
  return {
    server,
    databaseUrl,
    close: async () => {
      await server.stop();
      data.cleanup();
    },
  };
}

/** Sends one small text message over real SMTP; resolves with the reply to DATA (250 …). */
export function deliver(smtpPort: number, to: string, subject: string, body = `body of ${subject}`): Promise<string> {
  const raw = new TextEncoder().encode(`From: Sender <sender@example.org>\r\nTo: ${to}\r\nSubject: ${subject}\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${body}\r\n`);
  return sendRawSmtp(smtpPort, 'sender@example.org', to, raw);
}

/** Sends `count` messages over one SMTP connection, in order, subjects `${prefix}-<n>`. */
export async function deliverMany(smtpPort: number, to: string, prefix: string, count: number): Promise<void> {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, ignoreTLS: true, pool: true, maxConnections: 1, maxMessages: Infinity, socketTimeout: 10_000 });
  try {
    for (let n = 0; n < count; n += 1) {
      await transport.sendMail({ from: 'sender@example.org', to, subject: `${prefix}-${n}`, text: `message ${n}` });
    }
  } finally {
    transport.close();
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
