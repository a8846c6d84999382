import { SmtpLineClient } from './smtp-script.js';

/** When a message's data was finished and what the server answered, in ms from the hostile message's end. */
export interface Delivery {
  reply: string;
  /** ms from the end of the hostile message's data to this reply. */
  answeredAfterMs: number;
}

/** An SMTP transaction brought up to the point where only the message data is left to send. */
async function openTransaction(port: number, from: string, to: string, replyTimeoutMs: number): Promise<SmtpLineClient> {
  const client = await SmtpLineClient.open(port, '127.0.0.1', replyTimeoutMs);
  const expect = async (sent: string, code: number): Promise<void> => {
    const reply = await client.nextReply(sent);
    if (reply.code !== code) throw new Error(`${sent}: expected ${code}, got ${reply.lines.join(' | ')}`);
  };
  await expect('(greeting)', 220);
  for (const [command, code] of [
    ['EHLO beside.test', 250],
    [`MAIL FROM:<${from}>`, 250],
    [`RCPT TO:<${to}>`, 250],
    ['DATA', 354],
  ] as const) {
    client.write(`${command}\r\n`);
    await expect(command, code);
  }
  return client;
}

/** The data of a message as sent after DATA: CRLF lines, dots stuffed (RFC 5321 §4.5.2), the final dot. */
function dataOf(message: string): string {
  const crlf = message.replace(/\r?\n/g, '\r\n').replace(/(^|\r\n)\./g, '$1..');
  return `${crlf}${crlf.endsWith('\r\n') ? '' : '\r\n'}.\r\n`;
}

/**
 * Sends `hostile` and, `gapMs` after its data is complete, `innocent`, on two SMTP connections
 * opened beforehand (so both reach the parser that far apart, as two senders' mail would).
 * Resolves with both replies and when each came, from the end of the hostile data.
 */
export async function sendBeside(
  port: number,
  envelope: { from: string; to: string },
  messages: { hostile: string; innocent: string; gapMs: number },
  replyTimeoutMs = 30_000,
): Promise<{ hostile: Delivery; innocent: Delivery }> {
  const [first, second] = await Promise.all([
    openTransaction(port, envelope.from, envelope.to, replyTimeoutMs),
    openTransaction(port, envelope.from, envelope.to, replyTimeoutMs),
  ]);
  try {
    const answer = async (client: SmtpLineClient, sent: string, since: number): Promise<Delivery> => {
      const reply = await client.nextReply(sent);
      return { reply: reply.lines.join('\n'), answeredAfterMs: performance.now() - since };
    };
    first.write(dataOf(messages.hostile));
    const since = performance.now();
    const hostile = answer(first, '(hostile data)', since);
    await new Promise((resolve) => setTimeout(resolve, messages.gapMs));
    second.write(dataOf(messages.innocent));
    const innocent = answer(second, '(innocent data)', since);
    return { hostile: await hostile, innocent: await innocent };
  } finally {
    first.destroy();
    second.destroy();
  }
}

/**
 * An ordinary message with a one-time code in its text and a small attachment: a full parse
 * finds both, the header-only fallback neither.
 */
export function innocentMessage(to: string, subject: string): string {
  return [
    'From: Service <noreply@service.test>',
    `To: ${to}`,
    `Subject: ${subject}`,
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="b1"',
    '',
    '--b1',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Your verification code is 482913.',
    '--b1',
    'Content-Type: application/pdf; name="invoice.pdf"',
    'Content-Disposition: attachment; filename="invoice.pdf"',
    'Content-Transfer-Encoding: base64',
    '',
    'JVBERi0xLjQK',
    '--b1--',
    '',
  ].join('\r\n');
}
