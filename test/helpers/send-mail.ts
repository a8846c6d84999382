import { execFile } from 'node:child_process';
import nodemailer from 'nodemailer';
import type Mail from 'nodemailer/lib/mailer/index.js';

/** Sends one message with nodemailer over real SMTP on loopback; resolves on the 250. */
export async function sendWithNodemailer(smtpPort: number, message: Mail.Options): Promise<string> {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: smtpPort,
    secure: false,
    ignoreTLS: true,
    connectionTimeout: 5000,
    greetingTimeout: 5000,
    socketTimeout: 10_000,
  });
  try {
    const info = await transport.sendMail({ from: '"Sender Name" <sender@example.org>', ...message });
    return info.response;
  } finally {
    transport.close();
  }
}

/** Sends with swaks (guard the test with toolAvailable('swaks', …)); resolves with its transcript, rejects on a non-zero exit. */
export function sendWithSwaks(smtpPort: number, args: string[]): Promise<string> {
  return new Promise((done, fail) => {
    execFile('swaks', ['--server', '127.0.0.1', '--port', String(smtpPort), '--timeout', '10', ...args], { timeout: 20_000 }, (error, stdout, stderr) => {
      if (error) fail(new Error(`swaks failed: ${error.message}\n${stdout}\n${stderr}`));
      else done(stdout);
    });
  });
}
