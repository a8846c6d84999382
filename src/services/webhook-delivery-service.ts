import { CHECK_FIELD_BYTES } from '../domain/check-limits.js';
import type { Clock } from '../domain/clock.js';
import type { MessageView } from '../domain/types.js';
import { webhookRetryDelayMs } from '../domain/webhook-backoff.js';
import { VIEWS, type MessageReads } from '../ports/message-reads.js';
import type { ClaimedDelivery, WebhookStore } from '../ports/webhook-store.js';
import type { WebhookTransport } from '../ports/webhook-transport.js';

/** What an attempt came to: delivered, failed with another attempt owed, or failed for good. */
export type WebhookOutcome = 'delivered' | 'retried' | 'failed';

/** What one attempt of a claimed delivery came to, and when the next is due. */
export interface AttemptResult {
  outcome: WebhookOutcome;
  nextAt: Date | null;
  /** False when the claim was lost meanwhile (lease taken over, inbox deleted): nothing was recorded. */
  recorded: boolean;
  status: number | null;
  error: string | null;
}

/** What the delivery of one webhook attempt needs. */
export interface WebhookDeliveryDeps {
  store: Pick<MessageReads, 'readPage'>;
  webhooks: Pick<WebhookStore, 'recordAttempt'>;
  transport: Pick<WebhookTransport, 'post'>;
  clock: Clock;
  /** WEBHOOK_RETRY_BASE_SECONDS. */
  retryBaseSeconds: number;
  /** The message as a check listing gives it, in JSON (the HTTP presenter's). */
  renderMessage: (message: MessageView) => string;
  /** The jitter's randomness; Math.random unless a test pins it. */
  random?: () => number;
}

/** Why a delivery whose message is gone is given up without a request. */
const MESSAGE_GONE = 'the message was deleted before it was delivered';

/**
 * One attempt of one claimed delivery (docs/api.md "Webhooks"): the body
 * `{"event", "inbox", "message"}` with the message as a check listing gives it (its body and
 * HTML cut to CHECK_FIELD_BYTES each, like the listing), posted through the transport, then
 * recorded and rescheduled by the backoff, or ended when delivered or after the sixth attempt.
 */
export class WebhookDeliveryService {
  constructor(private readonly deps: WebhookDeliveryDeps) {}

  /** Makes the attempt and records it; throws only when the store fails (the delivery then stays owed). */
  async attempt(claimed: ClaimedDelivery): Promise<AttemptResult> {
    const body = await this.body(claimed);
    const sent =
      body === null
        ? { delivered: false, status: null, error: MESSAGE_GONE }
        : await this.deps.transport.post({ url: claimed.url, secret: claimed.secret, deliveryId: claimed.id, body });
    const ended = this.deps.clock.now();
    const delay = sent.delivered || body === null ? null : webhookRetryDelayMs(claimed.attempt, this.deps.retryBaseSeconds, this.deps.random);
    const nextAt = delay === null ? null : new Date(ended.getTime() + delay);
    const recorded = await this.deps.webhooks.recordAttempt({
      deliveryId: claimed.id,
      leaseToken: claimed.leaseToken,
      attempt: claimed.attempt,
      status: sent.status,
      error: sent.error,
      at: ended,
      nextAt,
    });
    const outcome: WebhookOutcome = sent.delivered ? 'delivered' : nextAt !== null ? 'retried' : 'failed';
    return { outcome, nextAt, recorded, status: sent.status, error: sent.error };
  }

  /** The JSON body of the delivery, or null when its message is no longer stored. */
  private async body(claimed: ClaimedDelivery): Promise<string | null> {
    const inbox = JSON.stringify(claimed.address);
    if (claimed.event === 'message.test' || claimed.messageId === null) return `{"event":"message.test","inbox":${inbox},"message":null}`;
    // The page of this one message, read as a check reads its listing (bodies cut alike).
    const page = await this.deps.store.readPage(claimed.inboxId, { ids: [claimed.messageId], limit: 1, maxFieldBytes: CHECK_FIELD_BYTES }, VIEWS);
    const [message] = page.messages;
    if (message === undefined) return null;
    return `{"event":"message.received","inbox":${inbox},"message":${this.deps.renderMessage(message)}}`;
  }
}
