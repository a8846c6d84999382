import type { Clock } from '../domain/clock.js';
import { CHECK_FIELD_BYTES } from '../domain/check-limits.js';
import { AppError } from '../domain/errors.js';
import { MAX_TIMER_MS, MAX_WAIT_SECONDS, STREAM_CURSOR_FALLBACKS, STREAM_MAX_PENDING_DELETES, STREAM_READ_BATCH } from '../domain/live-limits.js';
import { isInboxActive } from '../domain/plan.js';
import type { Inbox, MessageView, Session } from '../domain/types.js';
import type { InboxEvents } from '../ports/inbox-events.js';
import type { MailStore } from '../ports/mail-store.js';
import { readCheckPage, type CheckPage, type CheckRequest, type MessageSize } from './check-page.js';
import type { Hold, HeldRequests } from './held-requests.js';
import { assertCheckRequest, type InboxService } from './inbox-service.js';
import { SharedReads } from './shared-reads.js';
import { StreamPinger } from './stream-pinger.js';
import { Wakeup } from './wakeup.js';

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

/** How the transport takes part in a wait (LiveMailService.waitForMail). */
export interface WaitOptions {
  /** Aborted when the client went away: the wait ends at once. */
  cancel?: AbortSignal;
  /** Called once, when the request is about to be held (its answer is not there yet). */
  onHold?: () => Promise<void>;
}

/** Dependencies of the live-mail use cases. */
export interface LiveMailServiceDeps {
  store: MailStore;
  clock: Clock;
  inboxes: InboxService;
  events: InboxEvents;
  held: HeldRequests;
}

/**
 * Live mail (docs/api.md "Waiting for mail", "Event stream"): a check that waits, and an
 * inbox followed as a stream. Both subscribe to InboxEvents before they read and treat each
 * event as a wake-up: they re-read the store from the last message they saw, so nothing is
 * missed or sent twice whatever the transport does.
 */
export class LiveMailService {
  /** The same read asked by several live clients of an inbox at once, done once (shared-reads.ts). */
  private readonly reads = new SharedReads();
  /** Every stream's pings, from one timer (stream-pinger.ts). */
  private readonly pinger: StreamPinger;

  constructor(private readonly deps: LiveMailServiceDeps) {
    // A ping that fails has nothing to tell: its stream ends by its own close.
    this.pinger = new StreamPinger(deps.clock, () => undefined);
  }

  /**
   * GET /api/check?wait=N: the check answer; when it is empty and `waitSeconds` > 0, held
   * (one slot of HeldRequests) until a matching message is committed, the time is up, the
   * inbox expires or the node stops. Woken by a message or the stop, it reads again; a wait
   * that ran out answers the empty page it has (only an event brings a message).
   */
  async waitForMail(
    session: Session,
    usernameOrAddress: string,
    request: CheckRequest,
    waitSeconds: number,
    sizeOf: MessageSize,
    clientAddress: string,
    { cancel, onHold }: WaitOptions = {},
  ): Promise<CheckPage> {
    if (!Number.isInteger(waitSeconds) || waitSeconds < 0 || waitSeconds > MAX_WAIT_SECONDS) {
      throw new AppError('invalid_request', `wait must be an integer from 0 to ${MAX_WAIT_SECONDS}.`);
    }
    if (waitSeconds === 0 || request.beforeId !== undefined) {
      // A page of older messages (`before`) is history, not news: never held.
      return this.deps.inboxes.check(session, usernameOrAddress, request, sizeOf);
    }
    assertCheckRequest(request);
    const inbox = await this.deps.inboxes.findOwnActive(session, usernameOrAddress);
    const wakeup = new Wakeup();
    // Subscribed before the first read: a message committed after the read wakes the wait.
    const { reads } = this;
    const unsubscribe = this.deps.events.subscribe(inbox.id, (event) => {
      if (event.type === 'deleted') return;
      reads.woke();
      wakeup.set();
    });
    let hold: Hold | undefined;
    let offShutdown: (() => void) | undefined;
    const onAbort = () => wakeup.set();
    cancel?.addEventListener('abort', onAbort);
    try {
      const { clock } = this.deps;
      const deadline = Math.min(clock.now().getTime() + waitSeconds * 1000, inbox.expiresAt.getTime());
      // The wake-up flag is cleared only here, right before a read: no event is slept through.
      const read = async (first: boolean): Promise<CheckPage> => {
        wakeup.reset();
        const mark = reads.mark;
        // A client that waits again after each answer asks for what came after the newest
        // message it has: the ids alone (one index read, no body) tell when that is nothing.
        if (first && request.sinceId !== undefined && (await this.nothingAfter(inbox.id, request))) return { messages: [], hasMore: false };
        // Every waiter of the inbox woken by one message asks the same: one read for them all.
        return reads.read(checkKey(inbox.id, request, sizeOf), mark, () => readCheckPage(this.deps.store, inbox.id, request, sizeOf));
      };
      let page = await read(true);
      for (;;) {
        const left = deadline - clock.now().getTime();
        if (page.messages.length > 0 || left <= 0 || hold?.signal.aborted === true || cancel?.aborted === true) return page;
        if (hold === undefined) {
          // Only a request that has to wait takes a slot (rate_limited past the caps).
          hold = this.deps.held.acquire(session.id, clientAddress);
          offShutdown = hold.onShutdown(onAbort);
          // The transport makes the request cheap to hold (http/held-exchange.ts); an event
          // that comes meanwhile has set the wake-up, which the wait below then sees.
          await onHold?.();
          if (hold.signal.aborted) {
            page = await read(false);
            continue;
          }
        }
        // Only an event (or the end of the wait) can change the answer: a wait that ran out
        // answers the page it has without reading it again.
        if (await wakeup.wait(left)) page = await read(false);
      }
    } finally {
      unsubscribe();
      cancel?.removeEventListener('abort', onAbort);
      offShutdown?.();
      hold?.release();
    }
  }

  /** True when no message of the inbox after `request.sinceId` matches the request's filter. */
  private async nothingAfter(inboxId: string, request: CheckRequest): Promise<boolean> {
    const { ids } = await this.deps.store.listMessageIds(inboxId, { sinceId: request.sinceId, limit: 1, filter: request.filter });
    return ids.length === 0;
  }

  /** The session's active inbox for a stream, and a held slot for it (rate_limited past the caps). */
  async openStream(session: Session, usernameOrAddress: string, clientAddress: string) {
    const inbox = await this.deps.inboxes.findOwnActive(session, usernameOrAddress);
    const hold = this.deps.held.acquire(session.id, clientAddress);
    return { inbox, hold };
  }

  /**
   * Follows an inbox until the client leaves, the inbox expires (or is gone) or the node
   * stops: first every message after `sinceId` (oldest first), then each new one, each once;
   * `sink.ping()` when nothing was written for STREAM_PING_MS (the node's one ping sweep).
   * Without `sinceId` only messages that arrive from now on. One timer per stream, the
   * wake-up's, bounded by the expiry (a held stream's memory is the node's capacity:
   * docs/scaling.md "Live mail").
   */
  async follow(inbox: Inbox, sinceId: string | undefined, sink: StreamSink, stop: Pick<Hold, 'signal' | 'onShutdown'>): Promise<void> {
    const { store, events, clock } = this.deps;
    const { reads } = this;
    const wakeup = new Wakeup();
    const deletes: string[] = [];
    let overflow = false;
    const unsubscribe = events.subscribe(inbox.id, (event) => {
      if (event.type === 'deleted') {
        if (deletes.length >= STREAM_MAX_PENDING_DELETES) overflow = true;
        else deletes.push(event.messageId);
      }
      reads.woke();
      wakeup.set();
    });
    const onStop = () => wakeup.set();
    const offShutdown = stop.onShutdown(onStop);
    sink.closed.addEventListener('abort', onStop);
    const inboxId = inbox.id;
    let expiresAt = inbox.expiresAt.getTime();
    const pinged = { lastWriteAt: clock.now().getTime(), ping: () => sink.ping() };
    const offPing = this.pinger.add(pinged);
    const done = () => stop.signal.aborted || sink.closed.aborted || overflow;
    try {
      // Recently sent ids, newest last: the cursor, and where to go on when it is deleted.
      const sent: string[] = [];
      if (sinceId !== undefined) sent.push(sinceId);
      else {
        const newest = await reads.read(`newest\n${inboxId}`, reads.mark, () => store.listMessageIds(inboxId, { limit: 1 }));
        const id = newest.ids[0];
        if (id !== undefined) sent.push(id);
      }
      // Only an event can bring a message: a wait that ran out (the expiry is due) reads
      // nothing, and pings come from the node's sweep without waking this loop. Before, every
      // idle stream read the store at each ping: 10,000 streams made 1,000 empty reads a
      // second (docs/scaling.md "Live mail"). Without `sinceId` the
      // newest id just read is the cursor, and what arrived since then has woken the stream.
      // The wake-up flag is only cleared before a read, so no event is ever slept through.
      let woken = sinceId !== undefined;
      while (!done()) {
        if (woken) {
          wakeup.reset();
          const mark = reads.mark;
          for (const id of deletes.splice(0)) {
            const at = sent.indexOf(id);
            // The cursor must name a message still there, or the next read would start over.
            if (at !== -1 && sent.length > 1) sent.splice(at, 1);
            await sink.deleted(id);
            pinged.lastWriteAt = clock.now().getTime();
          }
          const cursor = sent.at(-1);
          // Every stream of the inbox woken by one message asks the same: one read for them all.
          const page = await reads.read(`after\n${inboxId}\n${cursor ?? ''}`, mark, () =>
            store.listMessagePage(inboxId, { sinceId: cursor, limit: STREAM_READ_BATCH, maxFieldBytes: CHECK_FIELD_BYTES, oldestFirst: true }),
          );
          for (const message of page.messages) {
            if (done()) return;
            await sink.message(message);
            pinged.lastWriteAt = clock.now().getTime();
            sent.push(message.id);
            if (sent.length > STREAM_CURSOR_FALLBACKS) sent.shift();
          }
          if (page.messages.length === STREAM_READ_BATCH) continue;
        }
        if (clock.now().getTime() >= expiresAt) {
          // Premium adoption may have moved the expiry: read it again before saying so.
          const current = await store.findInboxById(inboxId);
          if (current === null || !isInboxActive(current.expiresAt, clock.now())) {
            await sink.expired();
            return;
          }
          expiresAt = current.expiresAt.getTime();
        }
        if (done()) return;
        // Past MAX_TIMER_MS (an expiry ~24.8 days away) the wait ends early and is armed again.
        woken = await wakeup.wait(Math.min(MAX_TIMER_MS, Math.max(0, expiresAt - clock.now().getTime())));
      }
    } finally {
      offPing();
      unsubscribe();
      offShutdown();
      sink.closed.removeEventListener('abort', onStop);
    }
  }
}

/**
 * Which waits ask the same check: the same inbox, request and measure. A transport measures
 * with one function for all its waits (http/handlers/inbox-handlers.ts), so waits of one inbox
 * share; a different measure is a different question.
 */
const measures = new WeakMap<MessageSize, number>();
let measureCount = 0;
function checkKey(inboxId: string, request: CheckRequest, sizeOf: MessageSize): string {
  let measure = measures.get(sizeOf);
  if (measure === undefined) {
    measure = (measureCount += 1);
    measures.set(sizeOf, measure);
  }
  return `check\n${inboxId}\n${measure}\n${JSON.stringify(request)}`;
}
