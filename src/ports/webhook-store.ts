/**
 * Where an inbox's webhook and the deliveries it is owed live (docs/api.md "Webhooks"). The
 * delivery of a message is written by the message's own transaction (MailStore.insertMessage,
 * from the inbox's webhook row, so nothing is owed without a webhook); this port sets the
 * webhook, hands owed deliveries to the worker and records what each attempt came to.
 */

/** What a delivery announces: a stored message, or the owner's test of the URL. */
export type WebhookEvent = 'message.received' | 'message.test';

/** An inbox's webhook: the URL (normal form) and the signing secret as given. */
export interface Webhook {
  inboxId: string;
  url: string;
  secret: string;
  createdAt: Date;
}

/** A delivery handed to one worker until `leaseUntil`: what its next attempt needs. */
export interface ClaimedDelivery {
  /** `Tempinbox-Delivery`: the same for every attempt. */
  id: string;
  inboxId: string;
  /** The message announced; null for a test delivery. */
  messageId: string | null;
  event: WebhookEvent;
  /** The attempt about to be made, 1 to WEBHOOK_MAX_ATTEMPTS. */
  attempt: number;
  /** The inbox's webhook now (a second PUT sends what the old one owed to the new URL). */
  url: string;
  secret: string;
  /** The inbox's address, `username@domain`. */
  address: string;
  /** Proves the claim when its attempt is recorded: a claim whose lease ran out and was taken again records nothing. */
  leaseToken: string;
}

/** One attempt as GET /api/inbox/<username>/webhook lists it. */
export interface WebhookAttempt {
  deliveryId: string;
  messageId: string | null;
  attempt: number;
  /** The HTTP status answered, or null when none came. */
  status: number | null;
  /** Why the attempt failed, or null. */
  error: string | null;
  at: Date;
}

/** What an attempt came to, for recordAttempt. */
export interface AttemptRecord {
  deliveryId: string;
  leaseToken: string;
  attempt: number;
  status: number | null;
  error: string | null;
  /** When the attempt ended. */
  at: Date;
  /** When the next attempt is due; null: no more (delivered, or given up). */
  nextAt: Date | null;
}

/** The webhook role of the store: one webhook per inbox and its outbox of deliveries. */
export interface WebhookStore {
  /** Sets (or replaces) the inbox's webhook; false when the inbox is not stored. What the old one owed stays owed. */
  setWebhook(webhook: Webhook): Promise<boolean>;
  findWebhook(inboxId: string): Promise<Webhook | null>;
  /** Removes the inbox's webhook with every delivery it still owes; false when there was none. */
  deleteWebhook(inboxId: string): Promise<boolean>;
  /** Owes one `message.test` delivery, due at `now`, through the same outbox; false when the inbox has no webhook. */
  enqueueTest(inboxId: string, deliveryId: string, now: Date): Promise<boolean>;
  /**
   * Takes up to `limit` deliveries due at `now`, each for this caller alone until `now` +
   * `leaseMs`: a caller that dies holding one gives it back when its lease runs out.
   */
  claimDue(now: Date, limit: number, leaseMs: number): Promise<ClaimedDelivery[]>;
  /**
   * Records an attempt of a claimed delivery and reschedules it (`nextAt`) or ends it (null).
   * False, and nothing recorded, when the claim is no longer held (lease taken over, inbox deleted).
   */
  recordAttempt(record: AttemptRecord): Promise<boolean>;
  /**
   * Gives back claims this caller holds and will not record (attempts abandoned when a node
   * stops): each is due again at `now`, for any node, rather than when its lease runs out. A
   * claim taken over or recorded since is left as it is. The number given back.
   */
  releaseClaims(claims: readonly Pick<ClaimedDelivery, 'id' | 'leaseToken'>[], now: Date): Promise<number>;
  /** The inbox's last `limit` attempts, newest first. */
  listAttempts(inboxId: string, limit: number): Promise<WebhookAttempt[]>;
}

/**
 * Attempts kept per inbox: what GET shows (the last 20); older ones are deleted when a newer
 * one is recorded, so an inbox's attempt history never grows past this.
 */
export const WEBHOOK_ATTEMPTS_KEPT = 20;

/**
 * The WebhookStore of a store that carries one (the SQL and in-memory stores do: the webhook
 * lives in the database of the messages, so a delivery is written in the message's transaction).
 */
export function webhookStoreOf(store: object): WebhookStore | undefined {
  const candidate = (store as { webhooks?: WebhookStore }).webhooks;
  return candidate !== undefined && typeof candidate.claimDue === 'function' ? candidate : undefined;
}
