import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { playSession } from '../helpers/smtp-script.js';

/** The script player must fail loudly and in bounded time, or the SMTP tests prove nothing. */

let server: Server | undefined;
const sockets = new Set<Socket>();

afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A fake server: sends `greeting` (if any) and answers each line with `answer(line)`. */
async function fakeServer(greeting: string | null, answer: (line: string) => string | null): Promise<number> {
  server = createServer((socket) => {
    sockets.add(socket);
    if (greeting !== null) socket.write(greeting);
    let buffer = '';
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      let end = buffer.indexOf('\r\n');
      while (end !== -1) {
        const reply = answer(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (reply !== null) socket.write(reply);
        end = buffer.indexOf('\r\n');
      }
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : 0;
}

describe('playSession', () => {
  it('joins multi-line replies and returns the transcript', async () => {
    const port = await fakeServer('220 hi\r\n', (line) => (line.startsWith('EHLO') ? '250-one\r\n250-two\r\n250 three\r\n' : '221 bye\r\n'));
    const transcript = await playSession(port, [{ send: 'EHLO x', expect: /^250-one\n250-two\n250 three$/ }, { send: 'QUIT', expect: 221 }]);
    expect(transcript.map((r) => r.code)).toEqual([220, 250, 221]);
  });

  it('rejects with the exchange when a reply does not match', async () => {
    const port = await fakeServer('220 hi\r\n', () => '550 5.1.1 nope\r\n');
    await expect(playSession(port, [{ send: 'RCPT TO:<a@b>', expect: 250 }])).rejects.toThrow(
      /step 0: sent "RCPT TO:<a@b>", expected 250, got "550 5.1.1 nope"/,
    );
  });

  it('gives up on a silent server after the step timeout', async () => {
    const port = await fakeServer(null, () => null);
    const started = Date.now();
    await expect(playSession(port, [], { stepTimeoutMs: 200 })).rejects.toThrow(/no reply to "\(greeting\)" within 200 ms/);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
