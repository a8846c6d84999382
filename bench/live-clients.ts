import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import type { BenchInbox } from './api-client.js';

/**
 * Held clients of the live-mail figure (docs/benchmarks.md, figure 8): event streams or
 * long-polls, each on its own socket, recording when each bench message reached each client.
 */

/**
 * Held requests per client address the service allows (HELD_PER_CLIENT of
 * src/domain/live-limits.ts, docs/api.md "Waiting for mail"). The clients are spread over
 * loopback source addresses so that no address holds more, even with the caps on.
 */
const CLIENTS_PER_SOURCE_ADDRESS = 100;
/** File descriptors the client process needs besides its sockets (SMTP senders, pipes, files). */
const SPARE_FILE_DESCRIPTORS = 200;
/** Long-poll `wait` (MAX_WAIT_SECONDS): a waiter is re-issued after each answer. */
const WAIT_SECONDS = 60;
/** Pause before a long-poll that failed (reset, 429) is asked again. */
const RETRY_MS = 100;
/** Bench message subjects: `bench-<n>`, found in an event or a check answer. */
const SUBJECT = /"subject":"(bench-[0-9]+)"/g;

/** The loopback source address of client `index`: 127.0.1.1, 127.0.1.2, … one per CLIENTS_PER_SOURCE_ADDRESS. */
function sourceAddress(index: number): string {
  const n = Math.floor(index / CLIENTS_PER_SOURCE_ADDRESS);
  return `127.0.${1 + Math.floor(n / 250)}.${1 + (n % 250)}`;
}

/** Open-file limit of this process (soft, from /proc/self/limits); Infinity when unlimited. */
function openFileLimit(): number {
  const line = /^Max open files\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
  return line === undefined || line === 'unlimited' ? Number.POSITIVE_INFINITY : Number(line);
}

/** Throws, saying what to do, when this process cannot open `clients` sockets. */
export function assertFileLimit(clients: number): void {
  const limit = openFileLimit();
  const needed = clients + SPARE_FILE_DESCRIPTORS;
  if (limit < needed) throw new Error(`live bench: ${clients} clients need ${needed} open files, the limit is ${limit}; raise it (ulimit -n ${needed}) or use fewer clients`);
}

/** What the clients saw: when each subject arrived at each client (performance.now()). */
export interface Arrival {
  subject: string;
  at: number;
}

/** A set of held clients on one service. */
export class LiveClients {
  readonly arrivals: Arrival[] = [];
  /** Answers other than 200 (a refused hold, an error), and failed connections. */
  failures = 0;
  /** Why they failed: status code or error code, with counts. */
  readonly failureReasons = new Map<string, number>();
  /** Long-polls answered (each is re-issued). */
  answers = 0;
  /**
   * Set by close(). Not passed to each request as its `signal`: an AbortSignal keeps its
   * listeners in a list that addEventListener walks for duplicates, so with 10,000 clients
   * re-polling 1,000 times a second the bench process spent half its busy time there and,
   * saturated, sent 45 messages/s instead of 100 (a --cpu-prof of this process). close()
   * destroys the agent's sockets instead, which ends every request.
   */
  private closed = false;
  /** One socket per stream; long-polls keep theirs alive between polls (as real clients do). */
  private readonly agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY, maxFreeSockets: Number.POSITIVE_INFINITY });
  private opened = 0;

  constructor(private readonly baseUrl: string) {}

  /** Opens an event stream; resolves when its headers arrived (rejects on anything but 200). */
  openStream(inbox: BenchInbox): Promise<void> {
    const localAddress = sourceAddress((this.opened += 1) - 1);
    return new Promise((resolve, reject) => {
      const req = request(
        `${this.baseUrl}/api/inbox/${inbox.username}/events`,
        { agent: this.agent, localAddress, headers: { cookie: inbox.cookie, accept: 'text/event-stream' } },
        (res) => {
          if (res.statusCode !== 200) {
            this.fail(`HTTP ${res.statusCode}`);
            res.resume();
            reject(new Error(`event stream answered ${res.statusCode}`));
            return;
          }
          res.setEncoding('utf8');
          let buffer = '';
          res.on('data', (chunk: string) => {
            buffer += chunk;
            const end = buffer.lastIndexOf('\n\n');
            if (end === -1) return;
            this.record(buffer.slice(0, end));
            buffer = buffer.slice(end + 2);
          });
          // A stream cut by the server (a drop, a crash) shows as missing events.
          res.on('error', (error: NodeJS.ErrnoException) => {
            if (!this.closed) this.fail(`stream ${error.code ?? error.message}`);
          });
          resolve();
        },
      );
      req.on('error', (error: NodeJS.ErrnoException) => {
        if (!this.closed) this.fail(error.code ?? error.message);
        reject(error);
      });
      req.end();
    });
  }

  /** Starts a long-poll loop: `wait` with `since`, re-issued after each answer until close(). */
  startWaiter(inbox: BenchInbox): void {
    const localAddress = sourceAddress((this.opened += 1) - 1);
    let since = '';
    const once = (): void => {
      if (this.closed) return;
      // Each poll ends once: with its answer, or with the first error of its request or answer.
      let ended = false;
      const retry = (reason: string): void => {
        if (ended || this.closed) return;
        ended = true;
        this.fail(reason);
        setTimeout(once, RETRY_MS);
      };
      const query = `wait=${WAIT_SECONDS}${since === '' ? '' : `&since=${since}`}`;
      const req = request(`${this.baseUrl}/api/check/${inbox.username}?${query}`, { agent: this.agent, localAddress, headers: { cookie: inbox.cookie } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('error', (error: NodeJS.ErrnoException) => retry(error.code ?? error.message));
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          if (res.statusCode !== 200) return retry(`HTTP ${res.statusCode}`);
          if (ended) return;
          ended = true;
          this.answers += 1;
          this.record(text);
          // The newest id comes first in a check answer.
          since = /"id":"([^"]+)"/.exec(text)?.[1] ?? since;
          once();
        });
      });
      req.on('error', (error: NodeJS.ErrnoException) => retry(error.code ?? error.message));
      req.end();
    };
    once();
  }

  /** Closes every client (their sockets too). */
  close(): void {
    this.closed = true;
    this.agent.destroy();
  }

  private fail(reason: string): void {
    this.failures += 1;
    this.failureReasons.set(reason, (this.failureReasons.get(reason) ?? 0) + 1);
  }

  private record(text: string): void {
    const at = performance.now();
    for (const match of text.matchAll(SUBJECT)) this.arrivals.push({ subject: match[1] as string, at });
  }
}
