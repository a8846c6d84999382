import { connect, type Socket } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSmtpFixture, TEST_PLAN, type SmtpFixture } from '../helpers/smtp-fixture.js';

/** Longest wait for one reply on a loaded machine. */
const REPLY_TIMEOUT_MS = 10_000;

/** A raw SMTP connection that sends lines and reads one (possibly multi-line) reply at a time. */
class Conversation {
  private buffered = '';
  private waiting: (() => void) | undefined;

  private constructor(private readonly socket: Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.buffered += chunk;
      this.waiting?.();
    });
  }

  static async open(port: number): Promise<Conversation> {
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    const conversation = new Conversation(socket);
    await conversation.reply();
    return conversation;
  }

  /** Sends `line` (CRLF added) and resolves with the last line of the reply. */
  async say(line: string): Promise<string> {
    this.socket.write(`${line}\r\n`);
    return this.reply();
  }

  /** The next complete reply's final line (`NNN text`). */
  async reply(): Promise<string> {
    const deadline = Date.now() + REPLY_TIMEOUT_MS;
    for (;;) {
      const match = /^(\d{3}) .*\r\n/m.exec(this.buffered);
      if (match !== null) {
        const end = match.index + match[0].length;
        this.buffered = this.buffered.slice(end);
        return match[0].trimEnd();
      }
      if (Date.now() > deadline) throw new Error(`no reply; got so far: ${JSON.stringify(this.buffered)}`);
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
        setTimeout(resolve, 100);
      });
    }
  }

  close(): void {
    this.socket.destroy();
  }
}

/** A transaction opened up to DATA's 354 for `recipients`. */
async function openTransaction(port: number, recipients: string[]): Promise<Conversation> {
  const conversation = await Conversation.open(port);
  expect(await conversation.say('EHLO client.example.org')).toMatch(/^250 /);
  expect(await conversation.say('MAIL FROM:<sender@example.org>')).toMatch(/^250 /);
  for (const recipient of recipients) expect(await conversation.say(`RCPT TO:<${recipient}>`)).toMatch(/^250 /);
  expect(await conversation.say('DATA')).toMatch(/^354 /);
  return conversation;
}

/** Ends DATA with a small message; resolves with the reply. */
function finish(conversation: Conversation, subject: string): Promise<string> {
  return conversation.say(`Subject: ${subject}\r\n\r\nhello\r\n.`);
}

/**
 * The caps and expiry are decided again when the message is stored (docs/api.md "SMTP"):
 * transactions that all passed RCPT cannot push an inbox past its cap, and an inbox that
 * expired meanwhile gets nothing.
 */
describe('SMTP: limits at the end of DATA', () => {
  let mx: SmtpFixture;
  const open: Conversation[] = [];
  beforeEach(async () => {
    mx = await startSmtpFixture();
  });
  afterEach(async () => {
    for (const conversation of open.splice(0)) conversation.close();
    await mx.close();
  });

  it('several transactions past RCPT at one below the cap: one 250, the others 452 4.2.2 after DATA', async () => {
    const inbox = await mx.inbox('nearlyfull');
    await mx.fill(inbox, TEST_PLAN.freeMaxMessages - 1);
    for (let i = 0; i < 4; i += 1) open.push(await openTransaction(mx.port, ['nearlyfull@tempinbox.test']));
    const replies = await Promise.all(open.map((conversation, i) => finish(conversation, `race ${i}`)));
    expect(replies.filter((reply) => reply.startsWith('250 '))).toHaveLength(1);
    expect(replies.filter((reply) => /^452 4\.2\.2 /.test(reply))).toHaveLength(3);
    expect(await mx.messagesOf(inbox)).toHaveLength(TEST_PLAN.freeMaxMessages);
  });

  it('an inbox that expires between RCPT and the end of DATA: 450 4.2.1, nothing stored', async () => {
    const inbox = await mx.inbox('shortlived', { ttlSeconds: 60 });
    const conversation = await openTransaction(mx.port, ['shortlived@tempinbox.test']);
    open.push(conversation);
    mx.clock.advance(61_000);
    expect(await finish(conversation, 'too late')).toMatch(/^450 4\.2\.1 /);
    expect(await mx.messagesOf(inbox)).toHaveLength(0);
  });

  it('one recipient full at store time and one with room: 250, and only the one with room has it', async () => {
    const full = await mx.inbox('fillsup');
    const roomy = await mx.inbox('roomy');
    await mx.fill(full, TEST_PLAN.freeMaxMessages - 1);
    const first = await openTransaction(mx.port, ['fillsup@tempinbox.test']);
    const second = await openTransaction(mx.port, ['fillsup@tempinbox.test', 'roomy@tempinbox.test']);
    open.push(first, second);
    expect(await finish(first, 'takes the last slot')).toMatch(/^250 /);
    expect(await finish(second, 'partly refused')).toMatch(/^250 /);
    expect((await mx.messagesOf(full)).map((m) => m.subject)).not.toContain('partly refused');
    expect((await mx.messagesOf(roomy)).map((m) => m.subject)).toEqual(['partly refused']);
  });

  it('an inbox at its byte cap is refused at RCPT with 452 4.2.2', async () => {
    const inbox = await mx.inbox('heavy');
    const now = mx.clock.now();
    const parsed = { from: '', to: '', subject: '', text: '', html: null, headers: [], messageId: null, attachments: [], codes: [], links: [] };
    const raw = new Uint8Array(TEST_PLAN.freeMaxBytes);
    const unlimited = { maxMessages: 1000, maxBytes: Number.MAX_SAFE_INTEGER };
    await mx.store.insertMessage({ envelopeFrom: '', parsed, raw, receivedAt: now }, [inbox.id], { now, free: unlimited, premium: unlimited });
    const conversation = await Conversation.open(mx.port);
    open.push(conversation);
    expect(await conversation.say('EHLO client.example.org')).toMatch(/^250 /);
    expect(await conversation.say('MAIL FROM:<sender@example.org>')).toMatch(/^250 /);
    expect(await conversation.say('RCPT TO:<heavy@tempinbox.test>')).toMatch(/^452 4\.2\.2 /);
  });
});
