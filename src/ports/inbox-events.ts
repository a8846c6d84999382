/**
 * What happened to an inbox, as a wake-up (docs/scaling.md "Live mail"): subscribers never
 * take an event's content as the truth; they re-read the store from the last message they
 * saw, so a lost, late or repeated event costs a read, never a message.
 * - `message`: a message was committed to the inbox.
 * - `deleted`: message `messageId` was deleted from it (streams forward the id).
 * - `resync`: the transport may have lost events (a dropped LISTEN connection); every
 *   subscriber of every inbox re-reads.
 * - `access`: who may read the inbox may have changed (it was deleted; without `inboxId`, a
 *   session redeemed a license or a license was revoked, which touches any inbox): held
 *   requests check their access again. Published on the node that made the change; other
 *   nodes' held requests check theirs at their next wake-up, before any message reaches them.
 */
export type InboxEvent =
  | { type: 'message'; inboxId: string }
  | { type: 'deleted'; inboxId: string; messageId: string }
  | { type: 'resync' }
  | { type: 'access'; inboxId?: string };

/** Called for each event of a subscribed inbox (and for every `resync`); must not throw. */
export type InboxEventListener = (event: InboxEvent) => void;

/**
 * The one event path between writers (delivery, deletion: after their commit) and readers
 * (long-polls, event streams). In-process on one node; on PostgreSQL LISTEN/NOTIFY carries
 * the events between nodes.
 */
export interface InboxEvents {
  /** Tells the subscribers of this node at once; call only after the change is committed. */
  publish(event: InboxEvent): void;
  /** Listens to one inbox; returns the function that stops listening. */
  subscribe(inboxId: string, listener: InboxEventListener): () => void;
  /** Starts the transport (LISTEN on PostgreSQL); resolves once events can arrive. */
  start(): Promise<void>;
  /** Stops the transport; no listener is called afterwards. */
  close(): Promise<void>;
}
