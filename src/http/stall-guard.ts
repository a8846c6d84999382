import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * An answer whose client accepts no bytes for this long is abandoned (docs/api.md "Fair use
 * and limits"): a minute is longer than any real client pauses while reading, and shorter
 * than the time a crowd of non-reading sockets needs to pin a node's memory.
 */
export const STALL_TIMEOUT_MS = 60_000;

/** How often the guard looks at the connections: detection within 60–65 s of the last progress. */
export const STALL_SWEEP_MS = 5_000;

/**
 * Largest single write of a large answer: the stall rule sees a client's progress only when
 * a write completes (the kernel took all of it), so an answer goes out in slices that a slow
 * reader finishes well within the minute (64 KiB in a minute is ~1 KB/s).
 */
export const ANSWER_SLICE_BYTES = 64 * 1024;

/** Where a connection with bytes waiting for its client stood at the last look. */
interface Progress {
  /** Bytes of the connection's writes that had completed. */
  done: number;
  /** When `done` last moved (ms, performance.now()). */
  since: number;
}

/** Options of the guard; tests shorten the times. */
export interface StallGuardOptions {
  timeoutMs?: number;
  sweepMs?: number;
}

/**
 * Destroys every connection of an HTTP server whose client has taken none of the bytes
 * waiting for it for `timeoutMs`, whatever the answer: a large check, a raw download, a held
 * answer or an event stream. One timer for the server: each sweep looks at the connections
 * that have bytes queued (`writableLength`) and at how many bytes of their writes completed
 * (`bytesWritten` counts the queued ones too, so the difference is what the client took;
 * a write completes once the kernel took the whole of it, and large answers are written in
 * slices of at most ANSWER_SLICE_BYTES, so a reading client always moves it). A connection
 * that is idle (nothing queued) is never touched: waiting for a request is the keep-alive
 * timeout's business, and a held wait sends nothing on purpose.
 */
export class StallGuard {
  private readonly sockets = new Set<Socket>();
  private readonly progress = new Map<Socket, Progress>();
  private timer: NodeJS.Timeout | undefined;
  private readonly timeoutMs: number;
  private readonly sweepMs: number;

  constructor(options: StallGuardOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? STALL_TIMEOUT_MS;
    this.sweepMs = options.sweepMs ?? STALL_SWEEP_MS;
  }

  /** Watches every connection `server` accepts from now on, until stop(). */
  watch(server: Server): void {
    server.on('connection', this.onConnection);
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.sweep(), this.sweepMs);
      // The connections keep the process alive, never the guard.
      this.timer.unref();
    }
  }

  /** Stops the sweeps (the server is closing). */
  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Connections watched (tests). */
  get size(): number {
    return this.sockets.size;
  }

  private readonly onConnection = (socket: Socket): void => {
    this.sockets.add(socket);
    socket.once('close', () => {
      this.sockets.delete(socket);
      this.progress.delete(socket);
    });
  };

  private sweep(): void {
    const now = performance.now();
    // Bounded by the server's connections (the held-request caps and the OS's file limit).
    for (const socket of this.sockets) {
      const queued = socket.writableLength;
      if (queued === 0 || socket.destroyed) {
        this.progress.delete(socket);
        continue;
      }
      const done = socket.bytesWritten - queued;
      const last = this.progress.get(socket);
      if (last === undefined || last.done !== done) this.progress.set(socket, { done, since: now });
      else if (now - last.since >= this.timeoutMs) socket.destroy();
    }
  }
}
