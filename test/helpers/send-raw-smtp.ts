import { connect } from 'node:net';

/** Longest wait for one SMTP reply: generous for a loaded CI machine. */
const REPLY_TIMEOUT_MS = 10_000;

/**
 * Sends one message over real SMTP exactly as its bytes are, unlike nodemailer, which
 * rewrites bare LFs to CRLF: only the transparency dot of RFC 5321 §4.5.2 is added, and a
 * CRLF before the final dot when the message does not end with one. Resolves with the
 * reply to the data (e.g. "250 ...").
 */
export async function sendRawSmtp(
  port: number,
  from: string,
  to: string,
  message: Uint8Array,
  options: { localAddress?: string; helo?: string } = {},
): Promise<string> {
  // localAddress: another 127.x address, so the server sees another client (SPF tests).
  const socket = connect({ port, host: '127.0.0.1', localAddress: options.localAddress });
  let buffered = '';
  const waiters: ((reply: string) => void)[] = [];
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => {
    buffered += chunk;
    // A complete reply ends with a line "ddd text" (no hyphen after the code).
    for (;;) {
      const match = /(?:^|\r\n)(\d{3}) [^\r\n]*\r\n/.exec(buffered);
      if (match === null) break;
      const end = match.index + match[0].length;
      const reply = buffered.slice(0, end).trim();
      buffered = buffered.slice(end);
      waiters.shift()?.(reply);
    }
  });
  const next = () =>
    new Promise<string>((done, fail) => {
      const timer = setTimeout(() => fail(new Error('no SMTP reply in time')), REPLY_TIMEOUT_MS);
      waiters.push((reply) => {
        clearTimeout(timer);
        done(reply);
      });
    });
  const command = async (line: string, code: string) => {
    const reply = next();
    socket.write(`${line}\r\n`);
    const text = await reply;
    if (!text.startsWith(code)) throw new Error(`${line} -> ${text}`);
  };
  try {
    const greeting = await next();
    if (!greeting.startsWith('220')) throw new Error(`greeting ${greeting}`);
    await command(`EHLO ${options.helo ?? 'sender.example'}`, '250');
    await command(`MAIL FROM:<${from}> BODY=8BITMIME`, '250');
    await command(`RCPT TO:<${to}>`, '250');
    await command('DATA', '354');
    const stuffed = Buffer.from(Buffer.from(message).toString('latin1').replace(/(^|\n)\./g, '$1..'), 'latin1');
    const endsWithCrlf = stuffed.length >= 2 && stuffed[stuffed.length - 2] === 0x0d && stuffed[stuffed.length - 1] === 0x0a;
    const reply = next();
    socket.write(Buffer.concat([stuffed, Buffer.from(endsWithCrlf ? '.\r\n' : '\r\n.\r\n')]));
    const answer = await reply;
    socket.write('QUIT\r\n');
    return answer;
  } finally {
    socket.end();
  }
}
