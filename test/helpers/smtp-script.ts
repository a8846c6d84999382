import { connect, type Socket } from 'node:net';

/**
 * One step of a scripted SMTP session (inbucket's `scriptStep`): a line to send (CRLF is
 * appended; omit it to only read the next reply) and what the reply must be: its code, or
 * a pattern tested against the whole reply (lines joined by "\n"). An array expects one
 * reply per element, for pipelined commands sent in one write.
 */
export interface ScriptStep {
  send?: string;
  expect: Expectation | Expectation[];
}

/** A reply code, or a pattern for the full reply text. */
export type Expectation = number | RegExp;

/** A complete reply: its code and its lines as received (without CRLF). */
export interface SmtpReplyLines {
  code: number;
  lines: string[];
}

/** Options of playSession. */
export interface PlayOptions {
  host?: string;
  /** Source address of the client socket (any 127.x.y.z on loopback), to act as another client. */
  localAddress?: string;
  /** What the greeting must be; default 220. */
  greeting?: Expectation;
  /** Longest wait for any one reply. */
  stepTimeoutMs?: number;
}

/** Default bound of a step: long enough for a loaded CI machine, short enough to fail fast. */
const STEP_TIMEOUT_MS = 5_000;

/**
 * Plays a script against an SMTP server (inbucket's `playSession`): reads the greeting,
 * then sends each step and asserts its reply. Resolves with every reply, greeting first;
 * rejects with the step, what was sent and what came back when a reply does not match.
 */
export async function playSession(port: number, steps: ScriptStep[], options: PlayOptions = {}): Promise<SmtpReplyLines[]> {
  const client = await SmtpLineClient.open(port, options.host ?? '127.0.0.1', options.stepTimeoutMs ?? STEP_TIMEOUT_MS, options.localAddress);
  const transcript: SmtpReplyLines[] = [];
  try {
    const greeting = await client.nextReply('(greeting)');
    assertReply(greeting, options.greeting ?? 220, 'greeting', '(greeting)');
    transcript.push(greeting);
    for (const [index, step] of steps.entries()) {
      if (step.send !== undefined) client.write(`${step.send}\r\n`);
      const expectations = Array.isArray(step.expect) ? step.expect : [step.expect];
      for (const expectation of expectations) {
        const reply = await client.nextReply(step.send ?? '(read)');
        assertReply(reply, expectation, `step ${index}`, step.send ?? '(read)');
        transcript.push(reply);
      }
    }
    return transcript;
  } finally {
    client.destroy();
  }
}

/** Checks one reply against its expectation, with a message that shows the exchange. */
function assertReply(reply: SmtpReplyLines, expectation: Expectation, where: string, sent: string): void {
  const text = reply.lines.join('\n');
  const ok = typeof expectation === 'number' ? reply.code === expectation : expectation.test(text);
  if (!ok) {
    throw new Error(`${where}: sent ${JSON.stringify(sent.slice(0, 200))}, expected ${String(expectation)}, got ${JSON.stringify(text)}`);
  }
}

/** Multi-line replies continue with `NNN-`; the last line is `NNN ` or a bare `NNN`. */
const FINAL_LINE = /^(\d{3})(?: |$)/;
const ANY_LINE = /^(\d{3})[ -]?/;

/** A socket that yields complete SMTP replies, each wait bounded. */
export class SmtpLineClient {
  private buffer = '';
  private pending: string[] = [];
  private readonly replies: SmtpReplyLines[] = [];
  private waiter: (() => void) | null = null;
  private ended = false;

  private constructor(
    private readonly socket: Socket,
    private readonly timeoutMs: number,
  ) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.onData(chunk));
    socket.on('close', () => {
      this.ended = true;
      this.waiter?.();
    });
    socket.on('error', () => {
      // A reset after QUIT or a 421 is normal; a missing reply is reported by nextReply.
    });
  }

  /** Connects (from `localAddress` when given), bounded by the step timeout. */
  static open(port: number, host: string, timeoutMs: number, localAddress?: string): Promise<SmtpLineClient> {
    return new Promise((resolve, reject) => {
      const socket = connect({ port, host, ...(localAddress === undefined ? {} : { localAddress }) });
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`could not connect to ${host}:${port} within ${timeoutMs} ms`));
      }, timeoutMs);
      socket.once('connect', () => {
        clearTimeout(timer);
        resolve(new SmtpLineClient(socket, timeoutMs));
      });
      socket.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
  }

  write(data: string): void {
    this.socket.write(data);
  }

  /** The next complete reply; rejects when none arrives in time or the server hangs up. */
  async nextReply(sent: string): Promise<SmtpReplyLines> {
    const deadline = Date.now() + this.timeoutMs;
    for (;;) {
      const reply = this.replies.shift();
      if (reply !== undefined) return reply;
      if (this.ended) throw new Error(`connection closed with no reply to ${JSON.stringify(sent.slice(0, 200))}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no reply to ${JSON.stringify(sent.slice(0, 200))} within ${this.timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.waiter = null;
    }
  }

  destroy(): void {
    this.socket.destroy();
  }

  /** True once the server has closed the connection. */
  get closed(): boolean {
    return this.ended;
  }

  /** Resolves true when the server closes the connection within `ms`, false otherwise. */
  async waitClosed(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!this.ended && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        this.waiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.waiter = null;
    }
    return this.ended;
  }

  private onData(chunk: string): void {
    this.buffer += chunk;
    let newline = this.buffer.indexOf('\r\n');
    while (newline !== -1) {
      const line = this.buffer.slice(0, newline);
      this.buffer = this.buffer.slice(newline + 2);
      this.pending.push(line);
      const final = FINAL_LINE.exec(line);
      if (final !== null || !ANY_LINE.test(line)) {
        this.replies.push({ code: Number(final?.[1] ?? 0), lines: this.pending });
        this.pending = [];
      }
      newline = this.buffer.indexOf('\r\n');
    }
    this.waiter?.();
  }
}
