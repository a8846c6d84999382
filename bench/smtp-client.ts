import { connect, type Socket } from 'node:net';

/** A minimal SMTP client on a raw socket: one message, resolves the moment the 250 arrives. */
export async function sendOne(port: number, from: string, to: string, message: string): Promise<void> {
  const socket = connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  const replies = replyReader(socket);
  try {
    await expect(replies, 220);
    socket.write('EHLO bench.example\r\n');
    await expect(replies, 250);
    socket.write(`MAIL FROM:<${from}>\r\n`);
    await expect(replies, 250);
    socket.write(`RCPT TO:<${to}>\r\n`);
    await expect(replies, 250);
    socket.write('DATA\r\n');
    await expect(replies, 354);
    // Dot-stuffing (RFC 5321 §4.5.2); the messages we build have none, but be correct.
    socket.write(`${message.replace(/\r?\n/g, '\r\n').replace(/^\./gm, '..')}\r\n.\r\n`);
    await expect(replies, 250);
    socket.write('QUIT\r\n');
  } finally {
    socket.end();
  }
}

/** A message of about `bytes` bytes (headers included) with a plain-text body. */
export function buildMessage(from: string, to: string, subject: string, bytes: number): string {
  const head = `From: ${from}\r\nTo: ${to}\r\nSubject: ${subject}\r\nMessage-ID: <${Date.now()}.${Math.random()}@bench.example>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n`;
  const line = 'The quick brown fox jumps over the lazy dog 0123456789.\r\n';
  const body = line.repeat(Math.max(1, Math.ceil((bytes - head.length) / line.length)));
  return head + body.slice(0, Math.max(line.length, bytes - head.length));
}

type ReplyReader = () => Promise<{ code: number; text: string }>;

/** Reads complete (possibly multi-line) replies from the socket, one per call. */
function replyReader(socket: Socket): ReplyReader {
  let buffer = '';
  const waiting: Array<(reply: { code: number; text: string }) => void> = [];
  const ready: Array<{ code: number; text: string }> = [];
  let failure: Error | undefined;
  const failAll = (error: Error): void => {
    failure = error;
    for (const resolve of waiting.splice(0)) resolve({ code: 0, text: error.message });
  };
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buffer += chunk;
    let end: number;
    let text = '';
    while ((end = buffer.indexOf('\r\n')) >= 0) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      text += `${line}\n`;
      // "250-…" continues, "250 …" ends the reply (RFC 5321 §4.2.1).
      if (line[3] === '-') continue;
      const reply = { code: Number(line.slice(0, 3)), text };
      text = '';
      const resolve = waiting.shift();
      if (resolve !== undefined) resolve(reply);
      else ready.push(reply);
    }
  });
  socket.on('error', failAll);
  socket.on('close', () => failAll(new Error('connection closed')));
  return () => {
    const next = ready.shift();
    if (next !== undefined) return Promise.resolve(next);
    if (failure !== undefined) return Promise.resolve({ code: 0, text: failure.message });
    return new Promise((resolve) => waiting.push(resolve));
  };
}

async function expect(replies: ReplyReader, code: number): Promise<void> {
  const reply = await replies();
  if (reply.code !== code) throw new Error(`expected ${code}, got ${reply.text.trim() || reply.code}`);
}
