import type { Clock } from '../domain/clock.js';
import { MAX_TIMER_MS } from '../domain/live-limits.js';
import type { InboxEvent, InboxEvents } from '../ports/inbox-events.js';
import type { MailStore } from '../ports/mail-store.js';
import { readCheckPage, type CheckPage, type CheckRequest, type MessageSize } from './check-page.js';
import type { Hold, HeldRequests } from './held-requests.js';
import type { SharedReads } from './shared-reads.js';

/** How the transport takes part in a wait (LiveMailService.waitForMail). */
export interface WaitOptions {
  /** Aborted when the client went away: the wait ends at once. */
  cancel?: AbortSignal;
  /** Called once, when the request is about to be held (its answer is not there yet). */
  onHold?: () => Promise<void>;
}

/** What every wait of a node shares (LiveMailService's). */
export interface MailWaitDeps {
  store: MailStore;
  clock: Clock;
  events: InboxEvents;
  held: HeldRequests;
  reads: SharedReads;
}

/** Who waits, on what: the parts of a wait that outlive its first read. */
export interface MailWaitTarget {
  sessionId: string;
  clientAddress: string;
  inboxId: string;
  request: CheckRequest;
  sizeOf: MessageSize;
  /** The shared-read key of `request` (LiveMailService's checkKey). */
  key: string;
  /** When the wait answers what it has: the end of `wait`, or the inbox's expiry. */
  deadline: number;
}

/**
 * One check held until mail comes (LiveMailService.waitForMail): what a long-poll is while it
 * waits. Like a followed stream (inbox-follower.ts) it is one object whose state is fields: an
 * event, the stop, the client's leaving or its deadline timer wakes it; it then reads, and
 * answers (`answer`) or goes idle again holding no promise or closure of its own but the
 * listeners the bus and the stop signals call (docs/scaling.md "Live mail"). The wake-up flag
 * is cleared only right before a read, so no event is slept through.
 */
export class MailWait {
  /** The answer: the page to send (empty when the time ran out), or the error to answer with. */
  readonly answer: Promise<CheckPage>;
  private resolveAnswer: (page: CheckPage) => void = () => undefined;
  private rejectAnswer: (error: unknown) => void = () => undefined;
  private page: CheckPage = { messages: [], hasMore: false };
  /** An event (or the stop) came since the last read: read again. */
  private woken = true;
  /** The next read is the first one. */
  private first = true;
  /** A pump is in progress: a wake-up only sets `woken`, which that pump then sees. */
  private running = true;
  private finished = false;
  private hold: Hold | undefined;
  private offShutdown: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly deps: MailWaitDeps,
    private readonly target: MailWaitTarget,
    private readonly options: WaitOptions,
  ) {
    this.answer = new Promise((resolve, reject) => {
      this.resolveAnswer = resolve;
      this.rejectAnswer = reject;
    });
    // Subscribed before the first read: a message committed after the read wakes the wait.
    this.unsubscribe = deps.events.subscribe(target.inboxId, this.onEvent);
    options.cancel?.addEventListener('abort', this.onStop);
    void this.pump();
  }

  private readonly onEvent = (event: InboxEvent): void => {
    if (event.type === 'deleted') return;
    this.deps.reads.woke();
    this.onStop();
  };

  /** Also the client's leaving and the node's stop: the wait reads once more and answers. */
  private readonly onStop = (): void => {
    this.woken = true;
    if (this.running || this.finished) return;
    this.running = true;
    // After the other listeners of the same event: the waits it woke then share one read.
    queueMicrotask(() => void this.pump());
  };

  /** Called by the deadline timer: the wait answers the page it has. */
  timeUp(): void {
    this.timer = undefined;
    if (this.running || this.finished) return;
    this.running = true;
    void this.pump();
  }

  private async pump(): Promise<void> {
    this.running = true;
    try {
      const { clock, held } = this.deps;
      const { cancel, onHold } = this.options;
      for (;;) {
        if (this.woken) this.page = await this.read();
        const left = this.target.deadline - clock.now().getTime();
        if (this.page.messages.length > 0 || left <= 0 || this.hold?.signal.aborted === true || cancel?.aborted === true) {
          this.finish(undefined);
          return;
        }
        if (this.hold === undefined) {
          // Only a request that has to wait takes a slot (rate_limited past the caps).
          this.hold = held.acquire(this.target.sessionId, this.target.clientAddress);
          this.offShutdown = this.hold.onShutdown(this.onStop);
          // The transport makes the request cheap to hold (http/held-exchange.ts); an event
          // that comes meanwhile has set `woken`, which the loop then sees.
          await onHold?.();
          continue;
        }
        // Only an event (or the end of the wait) can change the answer: a wait that runs out
        // answers the page it has without reading it again.
        if (this.woken) continue;
        this.armTimer(left);
        return;
      }
    } catch (error) {
      this.finish(error);
    } finally {
      this.running = false;
    }
  }

  private async read(): Promise<CheckPage> {
    const { reads, store } = this.deps;
    const { inboxId, request, sizeOf, key } = this.target;
    this.woken = false;
    const mark = reads.mark;
    if (this.first) {
      this.first = false;
      // A client that waits again after each answer asks for what came after the newest
      // message it has: the ids alone (one index read, no body) tell when that is nothing.
      if (request.sinceId !== undefined) {
        const { ids } = await store.listMessageIds(inboxId, { sinceId: request.sinceId, limit: 1, filter: request.filter });
        if (ids.length === 0) return { messages: [], hasMore: false };
      }
    }
    // Every waiter of the inbox woken by one message asks the same: one read for them all.
    return reads.read(key, mark, () => readCheckPage(store, inboxId, request, sizeOf));
  }

  /** One timer per wait, its deadline's; the wait is the timer's argument, not a closure. */
  private armTimer(left: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = setTimeout(timeUp, Math.min(MAX_TIMER_MS, left), this);
  }

  private finish(error: unknown): void {
    if (this.finished) return;
    this.finished = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.unsubscribe();
    this.options.cancel?.removeEventListener('abort', this.onStop);
    this.offShutdown?.();
    this.hold?.release();
    if (error === undefined) this.resolveAnswer(this.page);
    else this.rejectAnswer(error);
  }
}

function timeUp(wait: MailWait): void {
  wait.timeUp();
}
