import type { Clock } from '../domain/clock.js';
import { AppError } from '../domain/errors.js';
import { MAX_WAIT_SECONDS } from '../domain/live-limits.js';
import { owns } from '../domain/ownership.js';
import type { Inbox, Session } from '../domain/types.js';
import type { InboxEvents } from '../ports/inbox-events.js';
import type { InboxStore } from '../ports/inbox-store.js';
import { hasFilter, IDS, type MessageReads, type PageListing } from '../ports/message-reads.js';
import type { SessionStore } from '../ports/session-store.js';
import type { CheckPage, CheckRequest } from './check-page.js';
import type { Hold, HeldRequests } from './held-requests.js';
import type { InboxService, PolledInbox } from './inbox-service.js';
import { SharedReads } from './shared-reads.js';
import { StreamPinger } from './stream-pinger.js';
import { InboxFollower, type FollowerDeps, type StreamSink } from './inbox-follower.js';
import { MailWait, type MailWaitDeps, type MailWaitTarget } from './mail-wait.js';
import type { ClientGone } from './client-gone.js';

export type { StreamSink } from './inbox-follower.js';

/** How a check is answered besides its request (LiveMailService.check). */
export interface CheckOptions {
  /** Seconds to hold an empty answer for new mail (`wait`); 0 or absent: answer at once. */
  waitSeconds?: number;
  /** Whether the client holds the answer with this ETag already (If-None-Match); only without `waitSeconds`. */
  isCurrent?: (etag: string) => boolean;
  /** The client's address: the per-address cap of held requests. */
  clientAddress?: string;
  /** Raised when the client went away: a held check ends at once. */
  cancel?: ClientGone;
}

/** Dependencies of the live-mail use cases. */
export interface LiveMailServiceDeps {
  store: Pick<SessionStore, 'findSession'> & Pick<InboxStore, 'findInboxById'> & MessageReads;
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
  /** What every wait and every follower shares: one object for the node, not one per held client. */
  private readonly waitDeps: MailWaitDeps;
  private readonly followerDeps: FollowerDeps;

  constructor(private readonly deps: LiveMailServiceDeps) {
    // A ping that fails has nothing to tell: its stream ends by its own close.
    this.pinger = new StreamPinger(deps.clock, () => undefined);
    const { store, clock, events, held } = deps;
    this.waitDeps = { store, clock, events, held, reads: this.reads, access: this.access };
    this.followerDeps = { store, clock, events, reads: this.reads, pinger: this.pinger, access: this.access };
  }

  /** True once the node stops: held answers written now close their connection. */
  get stopping(): boolean {
    return this.deps.held.signal.aborted;
  }

  /**
   * Whether a held request's session may still read its inbox, by the rule of a check (the
   * session found by its cookie's hash, the inbox by its id, ownership.ts): read once for all
   * the held requests of that session and inbox woken together.
   */
  private readonly access = (tokenHash: string, inboxId: string, mark: number): Promise<boolean> =>
    this.reads.read(`access\n${tokenHash}\n${inboxId}`, mark, async () => {
      const { store, clock } = this.deps;
      const [session, inbox] = await Promise.all([store.findSession(tokenHash, clock.now()), store.findInboxById(inboxId)]);
      return session !== null && inbox !== null && owns(session, inbox);
    });

  /**
   * GET /api/check/<username>, every form (docs/api.md "Check", "Waiting for mail"): without
   * `waitSeconds`, InboxService.check (its ETag, a 304 when `isCurrent`). With it, the same
   * check without an ETag, and when its page is empty, held (one slot of HeldRequests) until
   * a matching message is committed, the time is up, the inbox expires or the node stops:
   * each wake-up repeats that read from where the last one looked (MailWait); a wait that ran
   * out answers the empty page it has (only an event brings a message). A page of older
   * messages (`before`) is history, not news: never held.
   */
  async check<T>(
    polled: PolledInbox,
    usernameOrAddress: string,
    request: CheckRequest,
    listing: PageListing<T>,
    options: CheckOptions = {},
  ): Promise<{ etag?: string; page: CheckPage<T> | null }> {
    const { waitSeconds = 0, isCurrent, clientAddress = '', cancel } = options;
    if (!Number.isInteger(waitSeconds) || waitSeconds < 0 || waitSeconds > MAX_WAIT_SECONDS) {
      throw new AppError('invalid_request', `wait must be an integer from 0 to ${MAX_WAIT_SECONDS}.`);
    }
    const { inboxes, clock } = this.deps;
    if (waitSeconds === 0) return inboxes.check(polled, usernameOrAddress, request, listing, isCurrent);
    if (request.beforeId !== undefined) return { page: (await inboxes.check(polled, usernameOrAddress, request, listing)).page };
    const { inbox } = inboxes.checkedInbox(polled, usernameOrAddress, request);
    const session = polled.session;
    if (session === null) throw new AppError('session_required');
    const deadline = Math.min(clock.now().getTime() + waitSeconds * 1000, inbox.expiresAt.getTime());
    const target: MailWaitTarget<T> = {
      sessionId: session.id,
      tokenHash: session.tokenHash,
      clientAddress,
      inboxId: inbox.id,
      request,
      listing,
      key: checkKey(inbox.id, request, listing),
      deadline,
      first: async () => {
        // A filtered first read that matches nothing has looked at every message up to the
        // newest one read before it (ids alone, one index read).
        const head = hasFilter(request.filter) ? (await this.deps.store.readPage(inbox.id, { limit: 1, maxFieldBytes: 0 }, IDS)).messages[0] : undefined;
        const { page } = await inboxes.check(polled, usernameOrAddress, request, listing);
        return { page: page ?? { messages: [], hasMore: false }, head };
      },
    };
    return { page: await new MailWait(this.waitDeps, target, { cancel }).settled };
  }

  /** The session's active inbox for a stream, and a held slot for it (rate_limited past the caps). */
  async openStream(session: Session, usernameOrAddress: string, clientAddress: string) {
    const inbox = await this.deps.inboxes.findOwnActive(session, usernameOrAddress);
    const hold = this.deps.held.acquire(session.id, clientAddress);
    return { inbox, hold };
  }

  /**
   * Follows an inbox until the client leaves, the inbox expires, the session may no longer
   * read it (checked at every wake-up, before anything new is written) or the node stops: first every message after `sinceId` (oldest first), then each new one, each once;
   * `sink.ping()` when nothing was written for STREAM_PING_MS (the node's one ping sweep).
   * Without `sinceId` only messages that arrive from now on. Settles when the stream is over;
   * while it waits for mail a stream is one small object (inbox-follower.ts).
   */
  follow(session: Session, inbox: Inbox, sinceId: string | undefined, sink: StreamSink, stop: Pick<Hold, 'signal' | 'onShutdown'>): Promise<void> {
    return new InboxFollower(this.followerDeps, { tokenHash: session.tokenHash, inbox }, sinceId, sink, stop).settled;
  }
}

/**
 * Which waits ask the same check: the same inbox, request and listing. A transport lists with
 * one listing for all its checks (http/handlers/inbox-handlers.ts), so waits of one inbox
 * share; a different listing is a different question.
 */
const measures = new WeakMap<PageListing<unknown>, number>();
let measureCount = 0;
function checkKey<T>(inboxId: string, request: CheckRequest, listing: PageListing<T>): string {
  let measure = measures.get(listing as PageListing<unknown>);
  if (measure === undefined) {
    measure = (measureCount += 1);
    measures.set(listing as PageListing<unknown>, measure);
  }
  return `check\n${inboxId}\n${measure}\n${JSON.stringify(request)}`;
}
