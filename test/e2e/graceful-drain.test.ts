import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { CookieClient } from '../helpers/cookie-client.js';
import { startServer, tempDataDir } from '../helpers/server-process.js';

/** A line-reading SMTP client over a raw socket (bounded waits). */
class RawSmtp {
  private buffer = '';
  private waiters: Array<() => void> = [];

  constructor(readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.buffer += chunk;
      for (const wake of this.waiters.splice(0)) wake();
    });
    socket.on('error', () => undefined);
  }

  static open(port: number): Promise<RawSmtp> {
    return new Promise((done, fail) => {
      const socket = connect(port, '127.0.0.1', () => done(new RawSmtp(socket)));
      socket.once('error', fail);
    });
  }

  /** Resolves with the next complete reply line (`NNN text`), failing after 8 s. */
  async reply(): Promise<string> {
    const deadline = Date.now() + 8000;
    for (;;) {
      const match = /^(\d{3}) [^\r\n]*\r\n/m.exec(this.buffer);
      if (match) {
        const end = (match.index ?? 0) + match[0].length;
        this.buffer = this.buffer.slice(end);
        return match[0].trim();
      }
      if (Date.now() > deadline) throw new Error(`no SMTP reply; buffer: ${this.buffer}`);
      await new Promise<void>((wake) => {
        this.waiters.push(wake);
        setTimeout(wake, 100);
      });
    }
  }

  async command(line: string): Promise<string> {
    this.socket.write(`${line}\r\n`);
    return this.reply();
  }
}

describe('graceful stop', () => {
  it('finishes an SMTP transaction in flight at SIGTERM with 250, then exits 0; the message survives', async () => {
    const data = tempDataDir();
    const env = { DATABASE_URL: data.databaseUrl, RATE_LIMITS: 'off' };
    let server = await startServer(env);
    const client = new CookieClient(server.baseUrl);
    const { json: inbox } = await client.get('/api/create');

    const smtp = await RawSmtp.open(server.smtpPort);
    expect(await smtp.reply()).toMatch(/^220 /);
    smtp.socket.write('EHLO drain.test\r\n');
    // EHLO's reply is multi-line; its last line is "250 <extension>".
    expect(await smtp.reply()).toMatch(/^250 /);
    expect(await smtp.command('MAIL FROM:<drain@example.org>')).toMatch(/^250 /);
    expect(await smtp.command(`RCPT TO:<${inbox.email}>`)).toMatch(/^250 /);
    expect(await smtp.command('DATA')).toMatch(/^354 /);
    smtp.socket.write('Subject: sent across a shutdown\r\n\r\nfirst half\r\n');

    const exited = new Promise<number | null>((done) => server.child.once('exit', (code) => done(code)));
    const stoppedAt = Date.now();
    server.child.kill('SIGTERM');
    await new Promise((done) => setTimeout(done, 300));
    smtp.socket.write('second half\r\n.\r\n');
    expect(await smtp.reply()).toMatch(/^250 /);
    smtp.socket.destroy();

    expect(await exited).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(10_000);

    server = await startServer(env);
    try {
      const after = new CookieClient(server.baseUrl);
      after.setCookie('tempinbox_session', client.cookie('tempinbox_session'));
      const check = await after.get(`/api/check/${inbox.username}`);
      expect(check.json.count).toBe(1);
      expect(check.json.emails[0].subject).toBe('sent across a shutdown');
      expect(check.json.emails[0].body).toContain('second half');
    } finally {
      await server.stop();
      data.cleanup();
    }
  });
});
