import { describe, expect, it } from 'vitest';
import type { MessageView } from '../domain/types.js';
import type { AttemptRecord, ClaimedDelivery } from '../ports/webhook-store.js';
import type { WebhookPost, WebhookPostOutcome } from '../ports/webhook-transport.js';
import { WebhookDeliveryService } from './webhook-delivery-service.js';

const NOW = new Date('2030-01-01T00:00:00Z');

function claimed(overrides: Partial<ClaimedDelivery> = {}): ClaimedDelivery {
  return { id: 'dlv', inboxId: 'inb', messageId: 'msg', event: 'message.received', attempt: 1, url: 'https://hooks.example.org/', secret: 's3cr3t-s3cr3t-s3cr3t', address: 'box@tempinbox.test', leaseToken: 'lease', ...overrides };
}

/** The service over fakes: a store holding `messages`, a transport answering `answer`. */
function fixture(answer: WebhookPostOutcome, messages: MessageView[] = [{ id: 'msg' } as MessageView]) {
  const posts: WebhookPost[] = [];
  const records: AttemptRecord[] = [];
  const service = new WebhookDeliveryService({
    store: { readPage: (_inboxId, query) => Promise.resolve({ messages: messages.filter((m) => query.ids?.includes(m.id)) as never[], hasMore: false, beforeFound: true }) },
    webhooks: { recordAttempt: (record) => (records.push(record), Promise.resolve(true)) },
    transport: { post: (post) => (posts.push(post), Promise.resolve(answer)) },
    clock: { now: () => NOW },
    retryBaseSeconds: 10,
    renderMessage: (message) => JSON.stringify({ id: message.id, listed: true }),
    random: () => 0.5,
  });
  return { service, posts, records };
}

describe('WebhookDeliveryService', () => {
  it('posts the message as listed, and ends the delivery on a 2xx', async () => {
    const { service, posts, records } = fixture({ delivered: true, status: 204, error: null });
    expect(await service.attempt(claimed())).toMatchObject({ outcome: 'delivered', nextAt: null, recorded: true });
    expect(posts).toEqual([{ url: 'https://hooks.example.org/', secret: 's3cr3t-s3cr3t-s3cr3t', deliveryId: 'dlv', body: '{"event":"message.received","inbox":"box@tempinbox.test","message":{"id":"msg","listed":true}}' }]);
    expect(records).toEqual([{ deliveryId: 'dlv', leaseToken: 'lease', attempt: 1, status: 204, error: null, at: NOW, nextAt: null }]);
  });

  it('reschedules a failure by the backoff, and gives up after the sixth attempt', async () => {
    const { service, records } = fixture({ delivered: false, status: 500, error: null });
    expect(await service.attempt(claimed({ attempt: 2 }))).toMatchObject({ outcome: 'retried', nextAt: new Date(NOW.getTime() + 60_000) });
    expect(await service.attempt(claimed({ attempt: 6 }))).toMatchObject({ outcome: 'failed', nextAt: null });
    expect(records.map((record) => record.nextAt)).toEqual([new Date(NOW.getTime() + 60_000), null]);
  });

  it('posts a test delivery with message null', async () => {
    const { service, posts } = fixture({ delivered: true, status: 200, error: null });
    await service.attempt(claimed({ event: 'message.test', messageId: null }));
    expect(posts[0]?.body).toBe('{"event":"message.test","inbox":"box@tempinbox.test","message":null}');
  });

  it('gives up, without a request, a delivery whose message was deleted', async () => {
    const { service, posts, records } = fixture({ delivered: true, status: 200, error: null }, []);
    expect(await service.attempt(claimed())).toMatchObject({ outcome: 'failed', nextAt: null, status: null, error: 'the message was deleted before it was delivered' });
    expect(posts).toEqual([]);
    expect(records[0]).toMatchObject({ nextAt: null, error: 'the message was deleted before it was delivered' });
  });
});
