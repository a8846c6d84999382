import { newId } from '../../domain/ids.js';
import {
  WEBHOOK_ATTEMPTS_KEPT,
  type AttemptRecord,
  type ClaimedDelivery,
  type Webhook,
  type WebhookAttempt,
  type WebhookEvent,
  type WebhookStore,
} from '../../ports/webhook-store.js';

/** A delivery still owed (the SQL `webhook_deliveries` row). */
interface OwedDelivery {
  id: string;
  inboxId: string;
  messageId: string | null;
  event: WebhookEvent;
  attempts: number;
  dueAt: number;
  leaseToken: string | null;
}

/** What the fake needs of the MailStore fake it lives beside. */
export interface MemoryWebhookHost {
  /** The inbox's address, or undefined when it is not stored. */
  addressOf(inboxId: string): string | undefined;
  /** Runs an operation like a backend call (refused once the store is closed). */
  op<T>(work: () => T): Promise<T>;
}

/**
 * The in-memory fake of WebhookStore, owned by MemoryMailStore: the message fake owes a
 * delivery in the same synchronous step that stores the copy (owe), and drops an inbox's
 * webhook state with the inbox (dropInbox). The contract suite holds it to the SQL store's rules.
 */
export class MemoryWebhookStore implements WebhookStore {
  private readonly webhooks = new Map<string, Webhook>();
  private readonly deliveries = new Map<string, OwedDelivery>();
  /** Attempts per inbox, oldest first, at most WEBHOOK_ATTEMPTS_KEPT. */
  private readonly attempts = new Map<string, WebhookAttempt[]>();

  constructor(private readonly host: MemoryWebhookHost) {}

  setWebhook(webhook: Webhook): Promise<boolean> {
    return this.host.op(() => {
      if (this.host.addressOf(webhook.inboxId) === undefined) return false;
      this.webhooks.set(webhook.inboxId, { ...webhook, createdAt: new Date(webhook.createdAt.getTime()) });
      return true;
    });
  }

  findWebhook(inboxId: string): Promise<Webhook | null> {
    return this.host.op(() => {
      const webhook = this.webhooks.get(inboxId);
      return webhook === undefined ? null : { ...webhook, createdAt: new Date(webhook.createdAt.getTime()) };
    });
  }

  deleteWebhook(inboxId: string): Promise<boolean> {
    return this.host.op(() => {
      const had = this.webhooks.delete(inboxId);
      this.dropDeliveries(inboxId);
      return had;
    });
  }

  enqueueTest(inboxId: string, deliveryId: string, now: Date): Promise<boolean> {
    return this.host.op(() => this.oweNow(inboxId, null, 'message.test', now.getTime(), deliveryId));
  }

  claimDue(now: Date, limit: number, leaseMs: number): Promise<ClaimedDelivery[]> {
    return this.host.op(() => {
      const at = now.getTime();
      const due = [...this.deliveries.values()]
        .filter((delivery) => delivery.dueAt <= at)
        .sort((a, b) => a.dueAt - b.dueAt)
        .slice(0, Math.max(0, Math.floor(limit)));
      const leaseToken = newId();
      const claimed: ClaimedDelivery[] = [];
      for (const delivery of due) {
        const webhook = this.webhooks.get(delivery.inboxId);
        const address = this.host.addressOf(delivery.inboxId);
        if (webhook === undefined || address === undefined) continue;
        delivery.dueAt = at + leaseMs;
        delivery.leaseToken = leaseToken;
        claimed.push({
          id: delivery.id,
          inboxId: delivery.inboxId,
          messageId: delivery.messageId,
          event: delivery.event,
          attempt: delivery.attempts + 1,
          url: webhook.url,
          secret: webhook.secret,
          address,
          leaseToken,
        });
      }
      return claimed;
    });
  }

  recordAttempt(record: AttemptRecord): Promise<boolean> {
    return this.host.op(() => {
      const delivery = this.deliveries.get(record.deliveryId);
      if (delivery === undefined || delivery.leaseToken !== record.leaseToken) return false;
      const list = this.attempts.get(delivery.inboxId) ?? [];
      list.push({
        deliveryId: delivery.id,
        messageId: delivery.messageId,
        attempt: record.attempt,
        status: record.status,
        error: record.error,
        at: new Date(record.at.getTime()),
      });
      this.attempts.set(delivery.inboxId, list.slice(-WEBHOOK_ATTEMPTS_KEPT));
      if (record.nextAt === null) {
        this.deliveries.delete(delivery.id);
      } else {
        delivery.attempts = record.attempt;
        delivery.dueAt = record.nextAt.getTime();
        delivery.leaseToken = null;
      }
      return true;
    });
  }

  releaseClaims(claims: readonly Pick<ClaimedDelivery, 'id' | 'leaseToken'>[], now: Date): Promise<number> {
    return this.host.op(() => {
      let released = 0;
      for (const claim of claims) {
        const delivery = this.deliveries.get(claim.id);
        if (delivery === undefined || delivery.leaseToken !== claim.leaseToken) continue;
        delivery.dueAt = now.getTime();
        delivery.leaseToken = null;
        released += 1;
      }
      return released;
    });
  }

  listAttempts(inboxId: string, limit: number): Promise<WebhookAttempt[]> {
    return this.host.op(() =>
      (this.attempts.get(inboxId) ?? [])
        .slice(-Math.max(0, Math.floor(limit)))
        .reverse()
        .map((attempt) => ({ ...attempt, at: new Date(attempt.at.getTime()) })),
    );
  }

  /** Test hook and MemoryMailStore's: deliveries still owed, oldest first. */
  owedCount(): number {
    return this.deliveries.size;
  }

  /** Called by MemoryMailStore in the step that stores copy `messageId`: owes it when the inbox has a webhook. */
  owe(inboxId: string, messageId: string, at: number): void {
    this.oweNow(inboxId, messageId, 'message.received', at, newId());
  }

  /** Called by MemoryMailStore when the inbox goes (deleted, expired, taken over). */
  dropInbox(inboxId: string): void {
    this.webhooks.delete(inboxId);
    this.attempts.delete(inboxId);
    this.dropDeliveries(inboxId);
  }

  private oweNow(inboxId: string, messageId: string | null, event: WebhookEvent, at: number, id: string): boolean {
    if (!this.webhooks.has(inboxId)) return false;
    this.deliveries.set(id, { id, inboxId, messageId, event, attempts: 0, dueAt: at, leaseToken: null });
    return true;
  }

  private dropDeliveries(inboxId: string): void {
    for (const [id, delivery] of this.deliveries) if (delivery.inboxId === inboxId) this.deliveries.delete(id);
  }
}
