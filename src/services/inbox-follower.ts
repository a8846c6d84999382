import type { Clock } from '../domain/clock.js';
import { CHECK_FIELD_BYTES } from '../domain/check-limits.js';
import { STREAM_CURSOR_FALLBACKS, STREAM_MAX_PENDING_DELETES, STREAM_READ_PAGE } from '../domain/live-limits.js';
import { isInboxActive } from '../domain/plan.js';
import type { Inbox, MessageView } from '../domain/types.js';
import type { InboxEvent, InboxEvents } from '../ports/inbox-events.js';
import type { InboxStore } from '../ports/inbox-store.js';
import { IDS, VIEWS, type MessageReads } from '../ports/message-reads.js';
import type { ClientGone } from './client-gone.js';
import type { Hold } from './held-requests.js';
import type { AccessCheck } from './mail-wait.js';
import type { SharedReads } from './shared-reads.js';
import type { PingedStream, StreamPinger } from './stream-pinger.js';
import { WokenPump } from './woken-pump.js';

/** Where an event stream writes; message() resolves once the client has room for more. */
export interface StreamSink {
  message(message: MessageView): Promise<void>;
  deleted(messageId: string): Promise<void>;
  expired(): Promise<void>;
  /** A keep-alive for proxies: called when nothing was written for STREAM_PING_MS (stream-pinger.ts). */
  ping(): Promise<void>;
  /** Raised when the client went away (or was dropped); the stream then stops. */
  readonly closed: ClientGone;
}

/** What every follower of a node shares (LiveMailService's). */
export interface FollowerDeps {
  store: Pick<InboxStore, 'findInboxById'> & Pick<MessageReads, 'readPage'>;
  clock: Clock;
  events: InboxEvents;
  reads: SharedReads;
  pinger: StreamPinger;
  access: AccessCheck;
}

/** Who follows which inbox: the session (by its cookie's hash) whose access is checked at every wake-up. */
export interface FollowTarget {
  tokenHash: string;
  inbox: Inbox;
}

/**
 * One followed inbox (LiveMailService.follow): what an event stream is between two events.
 * An event, the stop or its expiry timer wakes it (woken-pump.ts); it then reads from its
 * cursor and writes until nothing is left, checks the expiry, and goes idle again. `settled`
 * settles when the stream is over.
 */
export class InboxFollower extends WokenPump<void> implements PingedStream {
  /** When the client was last written to (the node's ping sweep reads and sets it). */
  lastWriteAt: number;
  private readonly inboxId: string;
  private readonly tokenHash: string;
  private expiresAt: number;
  /** The session lost the inbox: the stream ends. */
  private lost = false;
  /** No `sinceId`: the first pump reads the newest id as the cursor. */
  private cursorUnknown: boolean;
  /** Deleted ids to tell the client, oldest first (bounded: STREAM_MAX_PENDING_DELETES). */
  private readonly deletes: string[] = [];
  /** More deletions than the bound: the stream ends and the client resumes from its cursor. */
  private overflow = false;
  /** Recently sent ids, newest last: the cursor, and where to go on when it is deleted. */
  private readonly sent: string[] = [];
  private readonly unsubscribe: () => void;
  private readonly offShutdown: () => void;
  private readonly offPing: () => void;

  constructor(
    private readonly deps: FollowerDeps,
    { tokenHash, inbox }: FollowTarget,
    sinceId: string | undefined,
    private readonly sink: StreamSink,
    private readonly stop: Pick<Hold, 'signal' | 'onShutdown'>,
  ) {
    super();
    this.inboxId = inbox.id;
    this.tokenHash = tokenHash;
    this.expiresAt = inbox.expiresAt.getTime();
    this.lastWriteAt = deps.clock.now().getTime();
    // With `sinceId` the first read starts from it; without, from the newest id read first.
    this.cursorUnknown = sinceId === undefined;
    this.woken = sinceId !== undefined;
    if (sinceId !== undefined) this.sent.push(sinceId);
    // Subscribed before the first read: what is committed after it wakes the stream.
    this.unsubscribe = deps.events.subscribe(this.inboxId, this.onEvent);
    this.offShutdown = stop.onShutdown(this.onStop);
    sink.closed.listen(this.onStop);
    this.offPing = deps.pinger.add(this);
    this.start();
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
    return this.stop.signal.aborted || this.sink.closed.raised || this.overflow || this.lost;
  }

  /**
   * Reads and writes until there is nothing new, then checks the expiry and arms its timer.
   * Only an event can bring a message: the timer (the expiry) reads nothing, and pings come
   * from the node's sweep without waking the stream (docs/scaling.md "Live mail").
   */
  protected async pump(): Promise<void> {
    if (this.cursorUnknown) {
      this.cursorUnknown = false;
      await this.readNewest();
    }
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
      this.armTimer(this.expiresAt - this.deps.clock.now().getTime());
      return;
    }
    this.succeed(undefined);
  }

  /** Without `sinceId`, the cursor is the newest id now (ids only, no body). */
  private async readNewest(): Promise<void> {
    const { reads, store } = this.deps;
    const inboxId = this.inboxId;
    const newest = await reads.read(`newest\n${inboxId}`, reads.mark, () => store.readPage(inboxId, { limit: 1, maxFieldBytes: 0 }, IDS));
    const id = newest.messages[0];
    if (id !== undefined) this.sent.push(id);
  }

  /**
   * Checks that the session may still read the inbox, tells the deletions, then writes the
   * next page of messages after the cursor (one page: a client that stops reading pins it
   * and one message's bytes, docs/api.md "Event stream").
   */
  private async readNews(): Promise<void> {
    const { reads, store, clock, access } = this.deps;
    const { sink, sent, inboxId } = this;
    this.woken = false;
    const mark = reads.mark;
    // Access is checked for the whole life of the stream, before anything new is written: a
    // session that lost the inbox (deleted, another license redeemed) gets nothing more.
    if (!(await access(this.tokenHash, inboxId, mark))) {
      this.lost = true;
      return;
    }
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
      store.readPage(inboxId, { sinceId: cursor, limit: STREAM_READ_PAGE, maxFieldBytes: CHECK_FIELD_BYTES, oldestFirst: true }, VIEWS),
    );
    for (const message of page.messages) {
      if (this.done()) return;
      await sink.message(message);
      this.lastWriteAt = clock.now().getTime();
      sent.push(message.id);
      if (sent.length > STREAM_CURSOR_FALLBACKS) sent.shift();
    }
    // More after this page: read on.
    if (page.hasMore) this.woken = true;
  }

  /** At the expiry: Premium adoption may have moved it, so it is read again before it is told. */
  private async stillActive(): Promise<boolean> {
    const current = await this.deps.store.findInboxById(this.inboxId);
    if (current === null || !isInboxActive(current.expiresAt, this.deps.clock.now())) return false;
    this.expiresAt = current.expiresAt.getTime();
    return true;
  }

  protected release(): void {
    this.offPing();
    this.unsubscribe();
    this.offShutdown();
    this.sink.closed.unlisten();
  }
}
