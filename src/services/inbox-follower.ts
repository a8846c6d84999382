import type { Clock } from '../domain/clock.js';
import { CHECK_FIELD_BYTES } from '../domain/check-limits.js';
import { MAX_TIMER_MS, STREAM_CURSOR_FALLBACKS, STREAM_MAX_PENDING_DELETES, STREAM_READ_BATCH } from '../domain/live-limits.js';
import { isInboxActive } from '../domain/plan.js';
import type { Inbox, MessageView } from '../domain/types.js';
import type { InboxEvent, InboxEvents } from '../ports/inbox-events.js';
import type { MailStore } from '../ports/mail-store.js';
import type { Hold } from './held-requests.js';
import type { SharedReads } from './shared-reads.js';
import type { PingedStream, StreamPinger } from './stream-pinger.js';

/** Where an event stream writes; message() resolves once the client has room for more. */
export interface StreamSink {
  message(message: MessageView): Promise<void>;
  deleted(messageId: string): Promise<void>;
  expired(): Promise<void>;
  /** A keep-alive for proxies: called when nothing was written for STREAM_PING_MS (stream-pinger.ts). */
  ping(): Promise<void>;
  /** Aborted when the client went away (or was dropped); the stream then stops. */
  readonly closed: AbortSignal;
}

/** What every follower of a node shares (LiveMailService's). */
export interface FollowerDeps {
  store: MailStore;
  clock: Clock;
  events: InboxEvents;
  reads: SharedReads;
  pinger: StreamPinger;
}

/**
 * One followed inbox (LiveMailService.follow): what an event stream is between two events.
 *
 * A held stream's memory is the node's capacity (docs/scaling.md "Live mail"), so a follower
 * is one object whose state is fields, not an async loop parked on a promise: while it is idle
 * it holds no promise, no generator and no closure of its own but the two listeners the event
 * bus and the stop signals call. An event (or the expiry timer, or the stop) wakes it; it then
 * reads from its cursor and writes until nothing is left (`pump`), and goes idle again. The
 * wake-up flag is cleared only right before a read, so no event is ever slept through.
 */
export class InboxFollower implements PingedStream {
  /** When the client was last written to (the node's ping sweep reads and sets it). */
  lastWriteAt: number;
  private readonly inboxId: string;
  private expiresAt: number;
  /** An event came since the last read: read again. */
  private woken: boolean;
  /** A pump is in progress: a wake-up only sets `woken`, which that pump then sees. */
  private running = false;
  private finished = false;
  /** Deleted ids to tell the client, oldest first (bounded: STREAM_MAX_PENDING_DELETES). */
  private readonly deletes: string[] = [];
  /** More deletions than the bound: the stream ends and the client resumes from its cursor. */
  private overflow = false;
  /** Recently sent ids, newest last: the cursor, and where to go on when it is deleted. */
  private readonly sent: string[] = [];
  private expiryTimer: NodeJS.Timeout | undefined;
  private readonly unsubscribe: () => void;
  private readonly offShutdown: () => void;
  private readonly offPing: () => void;
  private resolveEnd: () => void = () => undefined;
  private rejectEnd: (error: unknown) => void = () => undefined;
  /** Settles when the stream is over (the client left, the inbox expired, the node stops). */
  readonly ended: Promise<void>;

  constructor(
    private readonly deps: FollowerDeps,
    inbox: Inbox,
    sinceId: string | undefined,
    private readonly sink: StreamSink,
    private readonly stop: Pick<Hold, 'signal' | 'onShutdown'>,
  ) {
    this.inboxId = inbox.id;
    this.expiresAt = inbox.expiresAt.getTime();
    this.lastWriteAt = deps.clock.now().getTime();
    this.ended = new Promise((resolve, reject) => {
      this.resolveEnd = resolve;
      this.rejectEnd = reject;
    });
    // Until the first pump below starts, a stop seen while registering only marks it done.
    this.running = true;
    // With `sinceId` the first read starts from it; without, from the newest id read first.
    this.woken = sinceId !== undefined;
    if (sinceId !== undefined) this.sent.push(sinceId);
    // Subscribed before the first read: what is committed after it wakes the stream.
    this.unsubscribe = deps.events.subscribe(this.inboxId, this.onEvent);
    this.offShutdown = stop.onShutdown(this.onStop);
    sink.closed.addEventListener('abort', this.onStop);
    this.offPing = deps.pinger.add(this);
    void this.pump(sinceId === undefined);
  }

  /** The keep-alive the node's sweep asks for (StreamPinger). */
  ping(): Promise<void> {
    return this.sink.ping();
  }

  private readonly onEvent = (event: InboxEvent): void => {
    if (event.type === 'deleted') {
      if (this.deletes.length >= STREAM_MAX_PENDING_DELETES) this.overflow = true;
      else this.deletes.push(event.messageId);
    }
    this.deps.reads.woke();
    this.woken = true;
    this.wake();
  };

  /** The client left, or the node stops: the pump sees it and ends the stream. */
  private readonly onStop = (): void => this.wake();

  private done(): boolean {
    return this.stop.signal.aborted || this.sink.closed.aborted || this.overflow;
  }

  private wake(): void {
    if (this.running || this.finished) return;
    this.running = true;
    // After the other listeners of the same event: the streams it woke then share one read.
    queueMicrotask(() => void this.pump(false));
  }

  /**
   * Reads and writes until there is nothing new, then checks the expiry and arms its timer.
   * Only an event can bring a message: the timer (the expiry) reads nothing, and pings come
   * from the node's sweep without waking the stream (docs/scaling.md "Live mail").
   */
  private async pump(first: boolean): Promise<void> {
    this.running = true;
    try {
      if (first) await this.readNewest();
      while (!this.done()) {
        if (this.woken) {
          await this.readNews();
          continue;
        }
        if (this.deps.clock.now().getTime() >= this.expiresAt && !(await this.stillActive())) {
          await this.sink.expired();
          break;
        }
        // An event that came during the expiry read is read now; else the stream goes idle.
        if (this.woken) continue;
        this.armExpiry();
        return;
      }
      this.finish(undefined);
    } catch (error) {
      this.finish(error);
    } finally {
      this.running = false;
    }
  }

  /** Without `sinceId`, the cursor is the newest id now (ids only, no body). */
  private async readNewest(): Promise<void> {
    const { reads, store } = this.deps;
    const inboxId = this.inboxId;
    const newest = await reads.read(`newest\n${inboxId}`, reads.mark, () => store.listMessageIds(inboxId, { limit: 1 }));
    const id = newest.ids[0];
    if (id !== undefined) this.sent.push(id);
  }

  /** Tells the deletions, then writes one batch of messages after the cursor. */
  private async readNews(): Promise<void> {
    const { reads, store, clock } = this.deps;
    const { sink, sent, inboxId } = this;
    this.woken = false;
    const mark = reads.mark;
    for (const id of this.deletes.splice(0)) {
      const at = sent.indexOf(id);
      // The cursor must name a message still there, or the next read would start over.
      if (at !== -1 && sent.length > 1) sent.splice(at, 1);
      await sink.deleted(id);
      this.lastWriteAt = clock.now().getTime();
    }
    const cursor = sent.at(-1);
    // Every stream of the inbox woken by one message asks the same: one read for them all.
    const page = await reads.read(`after\n${inboxId}\n${cursor ?? ''}`, mark, () =>
      store.listMessagePage(inboxId, { sinceId: cursor, limit: STREAM_READ_BATCH, maxFieldBytes: CHECK_FIELD_BYTES, oldestFirst: true }),
    );
    for (const message of page.messages) {
      if (this.done()) return;
      await sink.message(message);
      this.lastWriteAt = clock.now().getTime();
      sent.push(message.id);
      if (sent.length > STREAM_CURSOR_FALLBACKS) sent.shift();
    }
    // A full batch: there may be more.
    if (page.messages.length === STREAM_READ_BATCH) this.woken = true;
  }

  /** At the expiry: Premium adoption may have moved it, so it is read again before it is told. */
  private async stillActive(): Promise<boolean> {
    const current = await this.deps.store.findInboxById(this.inboxId);
    if (current === null || !isInboxActive(current.expiresAt, this.deps.clock.now())) return false;
    this.expiresAt = current.expiresAt.getTime();
    return true;
  }

  /** One timer per stream, the expiry's; past MAX_TIMER_MS (~24.8 days) it is armed again. */
  private armExpiry(): void {
    if (this.expiryTimer !== undefined) clearTimeout(this.expiryTimer);
    const left = Math.min(MAX_TIMER_MS, Math.max(0, this.expiresAt - this.deps.clock.now().getTime()));
    // The follower is the timer's argument: no closure per arming.
    this.expiryTimer = setTimeout(wakeAtExpiry, left, this);
  }

  /** Called by the expiry timer. */
  expiryDue(): void {
    this.expiryTimer = undefined;
    this.wake();
  }

  private finish(error: unknown): void {
    if (this.finished) return;
    this.finished = true;
    if (this.expiryTimer !== undefined) clearTimeout(this.expiryTimer);
    this.expiryTimer = undefined;
    this.offPing();
    this.unsubscribe();
    this.offShutdown();
    this.sink.closed.removeEventListener('abort', this.onStop);
    if (error === undefined) this.resolveEnd();
    else this.rejectEnd(error);
  }
}

function wakeAtExpiry(follower: InboxFollower): void {
  follower.expiryDue();
}
