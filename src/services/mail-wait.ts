import type { Clock } from '../domain/clock.js';
import { AppError } from '../domain/errors.js';
import { HELD_ANSWER_MAX_BYTES } from '../domain/live-limits.js';
import type { InboxEvent, InboxEvents } from '../ports/inbox-events.js';
import { hasFilter, IDS, type MessageReads, type PageListing } from '../ports/message-reads.js';
import { readCheck, type CheckPage, type CheckRequest } from './check-page.js';
import type { ClientGone } from './client-gone.js';
import type { Hold, HeldRequests } from './held-requests.js';
import type { SharedReads } from './shared-reads.js';
import { WokenPump } from './woken-pump.js';

/** How the transport takes part in a wait (LiveMailService.check). */
export interface WaitOptions {
  /** Raised when the client went away: the wait ends at once. */
  cancel?: ClientGone;
}

/**
 * Whether the session whose cookie hashes to `tokenHash` may still read the inbox (the rule
 * of a check), read once for every held request that asks the same after the same wake-up
 * (`mark`, shared-reads.ts).
 */
export type AccessCheck = (tokenHash: string, inboxId: string, mark: number) => Promise<boolean>;

/** What every wait of a node shares (LiveMailService's). */
export interface MailWaitDeps {
  store: Pick<MessageReads, 'readPage'>;
  clock: Clock;
  events: InboxEvents;
  held: HeldRequests;
  reads: SharedReads;
  access: AccessCheck;
}

/** Who waits, on what: the parts of a wait that outlive its first read. */
export interface MailWaitTarget<T> {
  sessionId: string;
  /** The hash of the session's cookie: its access is checked again at each wake-up. */
  tokenHash: string;
  clientAddress: string;
  inboxId: string;
  request: CheckRequest;
  /** The transport's items of the answer (PageListing). */
  listing: PageListing<T>;
  /** The shared-read key of `request` (LiveMailService's checkKey). */
  key: string;
  /** When the wait answers what it has: the end of `wait`, or the inbox's expiry. */
  deadline: number;
  /**
   * The first read: the plain check's (InboxService.check), from the reads of the request
   * itself, and for a filtered wait the newest message read before it (readAfter's `head`).
   */
  first: () => Promise<{ page: CheckPage<T>; head: string | undefined }>;
}

/**
 * One check held until mail comes (LiveMailService.check): what a long-poll is while it
 * waits. An event, the stop, the client's leaving or its deadline timer wakes it
 * (woken-pump.ts); it then reads (the check's read again, from where it last looked), and
 * answers (`settled`) or goes idle again.
 */
export class MailWait<T> extends WokenPump<CheckPage<T>> {
  private page: CheckPage<T> = { messages: [], hasMore: false };
  /** The next read is the first one. */
  private first = true;
  /**
   * A filtered wait's cursor: the newest message of the inbox when its last read matched
   * nothing. Every message up to it was looked at, and a stored message never changes, so a
   * wake-up reads only what came after it, not the whole inbox again. Undefined: from `since`.
   */
  private examined: string | undefined;
  private hold: Hold | undefined;
  private offShutdown: (() => void) | undefined;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly deps: MailWaitDeps,
    private readonly target: MailWaitTarget<T>,
    private readonly options: WaitOptions,
  ) {
    super();
    this.woken = true;
    // Subscribed before the first read: a message committed after the read wakes the wait.
    this.unsubscribe = deps.events.subscribe(target.inboxId, this.onEvent);
    options.cancel?.listen(this.onStop);
    this.start();
  }

  private readonly onEvent = (event: InboxEvent): void => {
    // A deleted message changes no answer of a wait that has none.
    if (event.type === 'deleted') return;
    this.deps.reads.woke();
    this.onStop();
  };

  /** Also the client's leaving and the node's stop: the wait reads once more and answers. */
  private readonly onStop = (): void => {
    this.woken = true;
    this.wake();
  };

  protected async pump(): Promise<void> {
    const { clock, held } = this.deps;
    const { cancel } = this.options;
    for (;;) {
      if (this.woken) this.page = await this.read();
      const left = this.target.deadline - clock.now().getTime();
      if (this.page.messages.length > 0 || left <= 0 || this.hold?.signal.aborted === true || cancel?.raised === true) {
        this.succeed(this.page);
        return;
      }
      if (this.hold === undefined) {
        // Only a request that has to wait takes a slot (rate_limited past the caps).
        this.hold = held.acquire(this.target.sessionId, this.target.clientAddress);
        this.offShutdown = this.hold.onShutdown(this.onStop);
        continue;
      }
      // Only an event (or the end of the wait) can change the answer: a wait that runs out
      // answers the page it has without reading it again.
      if (this.woken) continue;
      this.armTimer(left);
      return;
    }
  }

  private async read(): Promise<CheckPage<T>> {
    const { reads, access } = this.deps;
    const { inboxId, key, tokenHash } = this.target;
    this.woken = false;
    const mark = reads.mark;
    if (this.first) {
      this.first = false;
      const { page, head } = await this.target.first();
      this.examined = page.messages.length === 0 ? head : undefined;
      return page;
    }
    // Access is checked for the whole wait: a session that lost the inbox (deleted, another
    // license redeemed) gets 404 before any later message, as a new check would.
    if (!(await access(tokenHash, inboxId, mark))) throw new AppError('inbox_not_found');
    // Every waiter of the inbox woken by one message asks the same: one read for them all.
    const after = this.examined;
    let read = await reads.read(`${key}\n${after ?? ''}`, mark, () => this.readAfter(after));
    // The cursor was deleted: read from `since` again.
    if (read.page.afterFound === false) read = await reads.read(`${key}\n`, mark, () => this.readAfter(undefined));
    this.examined = read.page.messages.length === 0 ? read.head : undefined;
    return read.page;
  }

  /**
   * The page after the cursor `after`, and, for a filtered wait, the newest message of the
   * inbox read just before it: the page has looked at least that far (a shared read hands
   * every waiter the pair it read together).
   */
  private async readAfter(after: string | undefined): Promise<{ page: CheckPage<T>; head: string | undefined }> {
    const { store } = this.deps;
    const { inboxId, request, listing } = this.target;
    const head = await this.newestIfFiltered();
    return { page: await readCheck(store, inboxId, request, listing, { afterId: after, budgetBytes: HELD_ANSWER_MAX_BYTES }), head };
  }

  /** The inbox's newest message id when the wait has a filter (one index read), else undefined: an unfiltered read stops at the first message. */
  private async newestIfFiltered(): Promise<string | undefined> {
    if (!hasFilter(this.target.request.filter)) return undefined;
    return (await this.deps.store.readPage(this.target.inboxId, { limit: 1, maxFieldBytes: 0 }, IDS)).messages[0];
  }

  protected release(): void {
    this.unsubscribe();
    this.options.cancel?.unlisten();
    this.offShutdown?.();
    this.hold?.release();
  }
}
