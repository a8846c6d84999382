import type { Clock } from '../domain/clock.js';
import { AppError } from '../domain/errors.js';
import { newId } from '../domain/ids.js';
import { isLicenseActive } from '../domain/plan.js';
import type { Session } from '../domain/types.js';
import { newWebhookSecret, webhookSecretProblem } from '../domain/webhook-secret.js';
import type { SessionStore } from '../ports/session-store.js';
import { WEBHOOK_ATTEMPTS_KEPT, type Webhook, type WebhookAttempt, type WebhookStore } from '../ports/webhook-store.js';
import type { WebhookTransport } from '../ports/webhook-transport.js';
import type { InboxService } from './inbox-service.js';

/** What the webhook routes need. */
export interface WebhookServiceDeps {
  store: Pick<SessionStore, 'findLicenseById'>;
  webhooks: WebhookStore;
  inboxes: InboxService;
  transport: Pick<WebhookTransport, 'checkUrl'>;
  clock: Clock;
  /** Told when a delivery is owed now (a test), so the worker of this node starts it at once. */
  wake?: () => void;
}

/** An inbox's webhook as GET shows it, with its last attempts. */
export interface WebhookOverview {
  webhook: Pick<Webhook, 'url' | 'createdAt'> | null;
  deliveries: WebhookAttempt[];
}

/**
 * Setting, reading and removing an inbox's webhook on behalf of its owner, and owing a test
 * delivery (docs/api.md "Webhooks"). Setting one and testing it need Premium; reading and
 * removing need only ownership, so a session whose Premium lapsed can still see and remove it.
 */
export class WebhookService {
  constructor(private readonly deps: WebhookServiceDeps) {}

  /**
   * PUT: checks the URL (its rules, then every address its host resolves to) and the secret
   * (a new one when none is given), then sets the webhook. The secret is in this answer only.
   */
  async set(session: Session, username: string, request: { url: string; secret?: string | undefined }): Promise<Webhook> {
    await this.requirePremium(session);
    const inbox = await this.deps.inboxes.findOwnActive(session, username);
    if (request.secret !== undefined) {
      const problem = webhookSecretProblem(request.secret);
      if (problem !== null) throw new AppError('invalid_request', problem);
    }
    const checked = await this.deps.transport.checkUrl(request.url);
    if (!checked.ok) throw new AppError(checked.code, checked.message);
    const webhook: Webhook = { inboxId: inbox.id, url: checked.url, secret: request.secret ?? newWebhookSecret(), createdAt: this.deps.clock.now() };
    // Deleted between the look-up and now: as missing as a name never seen.
    if (!(await this.deps.webhooks.setWebhook(webhook))) throw new AppError('inbox_not_found');
    return webhook;
  }

  /** GET: the webhook without its secret, and the inbox's last attempts, newest first. */
  async get(session: Session, username: string): Promise<WebhookOverview> {
    const inbox = await this.deps.inboxes.findOwn(session, username);
    const [webhook, deliveries] = await Promise.all([this.deps.webhooks.findWebhook(inbox.id), this.deps.webhooks.listAttempts(inbox.id, WEBHOOK_ATTEMPTS_KEPT)]);
    return { webhook: webhook === null ? null : { url: webhook.url, createdAt: webhook.createdAt }, deliveries };
  }

  /** DELETE: removes the webhook and what it still owed (nothing to remove is no error). */
  async remove(session: Session, username: string): Promise<void> {
    const inbox = await this.deps.inboxes.findOwn(session, username);
    await this.deps.webhooks.deleteWebhook(inbox.id);
  }

  /** POST …/webhook/test: owes one `message.test` delivery now; 404 webhook_not_found without a webhook. */
  async test(session: Session, username: string): Promise<{ deliveryId: string }> {
    await this.requirePremium(session);
    const inbox = await this.deps.inboxes.findOwnActive(session, username);
    const deliveryId = newId();
    if (!(await this.deps.webhooks.enqueueTest(inbox.id, deliveryId, this.deps.clock.now()))) throw new AppError('webhook_not_found');
    this.deps.wake?.();
    return { deliveryId };
  }

  private async requirePremium(session: Session): Promise<void> {
    const license = session.licenseId === null ? null : await this.deps.store.findLicenseById(session.licenseId);
    if (!isLicenseActive(license, this.deps.clock.now())) throw new AppError('premium_required', 'Webhooks need a Premium license redeemed in this session.');
  }
}
