import type { Clock } from '../domain/clock.js';
import { AppError } from '../domain/errors.js';
import { MAX_WAIT_SECONDS } from '../domain/live-limits.js';
import { owns } from '../domain/ownership.js';
import type { Inbox, Session } from '../domain/types.js';
import type { InboxEvents } from '../ports/inbox-events.js';
import type { InboxStore } from '../ports/inbox-store.js';
import type { MessageReads } from '../ports/message-reads.js';
import type { SessionStore } from '../ports/session-store.js';
import type { CheckPage, CheckRequest, MessageSize } from './check-page.js';
import type { Hold, HeldRequests } from './held-requests.js';
import { assertCheckRequest, type InboxService } from './inbox-service.js';
import { SharedReads } from './shared-reads.js';
import { StreamPinger } from './stream-pinger.js';
import { InboxFollower, type FollowerDeps, type StreamSink } from './inbox-follower.js';
import { MailWait, type MailWaitDeps, type WaitOptions } from './mail-wait.js';

export type { StreamSink } from './inbox-follower.js';

export type { WaitOptions } from './mail-wait.js';

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
    options: WaitOptions = {},
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
    const deadline = Math.min(this.deps.clock.now().getTime() + waitSeconds * 1000, inbox.expiresAt.getTime());
    const target = { sessionId: session.id, tokenHash: session.tokenHash, clientAddress, inboxId: inbox.id, request, sizeOf, key: checkKey(inbox.id, request, sizeOf), deadline };
    return new MailWait(this.waitDeps, target, options).settled;
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
