import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startSmtpFixture, type SmtpFixture } from '../helpers/smtp-fixture.js';

/** Opens a raw connection and resolves with the first reply line. */
function greet(port: number): Promise<{ socket: Socket; line: string }> {
  return new Promise((done, fail) => {
    const socket = connect(port, '127.0.0.1');
    const timer = setTimeout(() => fail(new Error('no greeting within 5 s')), 5000);
    socket.setEncoding('utf8');
    socket.once('data', (chunk: string) => {
      clearTimeout(timer);
      done({ socket, line: chunk.split('\r\n')[0] ?? '' });
    });
    socket.on('error', () => undefined);
  });
}

describe('SMTP connections per client address', () => {
  let fixture: SmtpFixture | undefined;
  const sockets: Socket[] = [];
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy();
    await fixture?.close();
  });

  it('refuses the connection over the limit with 421 4.7.0 and admits one again after a close', async () => {
    fixture = await startSmtpFixture({ maxConnectionsPerAddress: 2 });
    const first = await greet(fixture.port);
    const second = await greet(fixture.port);
    sockets.push(first.socket, second.socket);
    expect(first.line).toMatch(/^220 /);
    expect(second.line).toMatch(/^220 /);
    const third = await greet(fixture.port);
    sockets.push(third.socket);
    expect(third.line).toMatch(/^421 4\.7\.0 /);

    first.socket.end('QUIT\r\n');
    await new Promise((done) => first.socket.once('close', done));
    // onClose runs on the next tick after the socket closes: retry briefly (bounded).
    let again = await greet(fixture.port);
    for (let i = 0; i < 20 && !again.line.startsWith('220'); i += 1) {
      again.socket.destroy();
      await new Promise((done) => setTimeout(done, 25));
      again = await greet(fixture.port);
    }
    sockets.push(again.socket);
    expect(again.line).toMatch(/^220 /);
  });

  it('has no per-address limit when none is configured (RATE_LIMITS=off)', async () => {
    fixture = await startSmtpFixture();
    for (let i = 0; i < 25; i += 1) {
      const { socket, line } = await greet(fixture.port);
      sockets.push(socket);
      expect(line).toMatch(/^220 /);
    }
  });
});
