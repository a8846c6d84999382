import type { Clock } from '../domain/clock.js';
import { STREAM_PING_MS, STREAM_PING_SWEEP_MS } from '../domain/live-limits.js';

/** An open event stream as the pinger sees it: when it last wrote, and how to ping it. */
export interface PingedStream {
  /** Epoch ms of the stream's last write; the stream sets it when it writes an event. */
  lastWriteAt: number;
  ping(): Promise<void>;
}

/**
 * The keep-alive pings of every event stream of the node, from one timer (docs/scaling.md
 * "Live mail"): every STREAM_PING_SWEEP_MS it pings the streams that wrote nothing for
 * STREAM_PING_MS. Each stream used to wake its own loop for each ping (a new promise, timer
 * and closures each time): 10,000 idle streams made 1,000 such wake-ups a second, ~1.9 MB/s
 * of garbage, enough for V8 never to see the process as idle and never to give back the
 * memory that opening them had used (docs/benchmarks.md "One ping sweep for the node").
 * A stream's own wait now runs only for an event or its inbox's expiry.
 *
 * The timer runs only while a stream is open, and is unref'd: a stream's socket keeps the
 * process alive, the sweep never does.
 */
export class StreamPinger {
  private readonly streams = new Set<PingedStream>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Starts pinging `stream`; the function returned stops it. */
  add(stream: PingedStream): () => void {
    this.streams.add(stream);
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.sweep(), STREAM_PING_SWEEP_MS);
      this.timer.unref();
    }
    return () => {
      this.streams.delete(stream);
      if (this.streams.size === 0 && this.timer !== undefined) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  /** Streams being pinged (tests). */
  get size(): number {
    return this.streams.size;
  }

  private sweep(): void {
    const now = this.clock.now().getTime();
    // Bounded by the held-request caps: at most HELD_PER_NODE streams are open.
    for (const stream of this.streams) {
      if (now - stream.lastWriteAt < STREAM_PING_MS) continue;
      stream.lastWriteAt = now;
      stream.ping().catch(this.onError);
    }
  }
}
