import { describe, expect, it } from 'vitest';
import { systemClock } from '../domain/clock.js';
import { createLogger } from '../observability/logger.js';
import type { ClaimedDelivery } from '../ports/webhook-store.js';
import type { AttemptResult } from '../services/webhook-delivery-service.js';
import { WebhookWorker } from './webhook-worker.js';

const logger = createLogger('silent');

function delivery(id: string): ClaimedDelivery {
  return { id, inboxId: 'i', messageId: 'm', event: 'message.received', attempt: 1, url: 'http://x/', secret: 's', address: 'a@b', leaseToken: 't' };
}

const DELIVERED: AttemptResult = { outcome: 'delivered', nextAt: null, recorded: true, status: 200, error: null };

/** An outbox of `count` due deliveries, each claimable once. */
function outbox(count: number) {
  const due = Array.from({ length: count }, (_, i) => delivery(`d${i}`));
  const claims: number[] = [];
  const released: string[] = [];
  return {
    due,
    claims,
    released,
    claimDue: (_now: Date, limit: number) => {
      claims.push(limit);
      return Promise.resolve(due.splice(0, limit));
    },
    releaseClaims: (given: readonly Pick<ClaimedDelivery, 'id'>[]) => {
      released.push(...given.map((claim) => claim.id));
      return Promise.resolve(given.length);
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('WebhookWorker', () => {
  it('keeps at most `concurrency` attempts in flight and attempts each claimed delivery once', async () => {
    const store = outbox(50);
    let open = 0;
    let most = 0;
    const attempted: string[] = [];
    const worker = new WebhookWorker({
      webhooks: store,
      delivery: {
        attempt: async (claimed) => {
          open += 1;
          most = Math.max(most, open);
          attempted.push(claimed.id);
          await sleep(5);
          open -= 1;
          return DELIVERED;
        },
      },
      concurrency: 4,
      clock: systemClock,
      logger,
      pollIntervalMs: 60_000,
    });
    worker.start();
    for (let i = 0; i < 200 && attempted.length < 50; i += 1) await sleep(10);
    await worker.stop();
    expect(attempted).toHaveLength(50);
    expect(new Set(attempted).size).toBe(50);
    expect(most).toBe(4);
    // A claim never asks for more than the free slots.
    expect(Math.max(...store.claims)).toBeLessThanOrEqual(4);
  });

  it('starts a delivery owed now on wake(), without waiting for the poll', async () => {
    const store = outbox(0);
    const attempted: number[] = [];
    const worker = new WebhookWorker({
      webhooks: store,
      delivery: { attempt: () => (attempted.push(Date.now()), Promise.resolve(DELIVERED)) },
      concurrency: 2,
      clock: systemClock,
      logger,
      pollIntervalMs: 60_000,
    });
    worker.start();
    await sleep(20);
    store.due.push(delivery('late'));
    const woken = Date.now();
    worker.wake();
    for (let i = 0; i < 100 && attempted.length === 0; i += 1) await sleep(5);
    await worker.stop();
    expect(attempted).toHaveLength(1);
    expect((attempted[0] ?? Infinity) - woken).toBeLessThan(200);
  });

  it('looks again at the poll interval after a failed claim, and counts recorded outcomes only', async () => {
    let calls = 0;
    const outcomes: string[] = [];
    const worker = new WebhookWorker({
      webhooks: {
        releaseClaims: () => Promise.resolve(0),
        claimDue: () => {
          calls += 1;
          if (calls === 1) return Promise.reject(new Error('database away'));
          return Promise.resolve(calls === 2 ? [delivery('a'), delivery('b')] : []);
        },
      },
      delivery: {
        attempt: (claimed) =>
          Promise.resolve(claimed.id === 'a' ? { ...DELIVERED, outcome: 'retried' as const, nextAt: new Date(Date.now() + 60_000) } : { ...DELIVERED, recorded: false }),
      },
      concurrency: 2,
      clock: systemClock,
      logger,
      onOutcome: (outcome) => outcomes.push(outcome),
      pollIntervalMs: 30,
    });
    worker.start();
    for (let i = 0; i < 100 && calls < 2; i += 1) await sleep(5);
    await sleep(20);
    await worker.stop();
    expect(calls).toBeGreaterThanOrEqual(2);
    expect(outcomes).toEqual(['retried']);
  });

  it('stop() stops claiming, waits for attempts in flight at most its drain bound, and gives back their claims', async () => {
    const store = outbox(3);
    const worker = new WebhookWorker({
      webhooks: store,
      delivery: { attempt: () => new Promise<AttemptResult>(() => undefined) },
      concurrency: 2,
      clock: systemClock,
      logger,
      pollIntervalMs: 10,
      drainMs: 50,
    });
    worker.start();
    for (let i = 0; i < 100 && worker.active < 2; i += 1) await sleep(5);
    expect(worker.active).toBe(2);
    const started = performance.now();
    await worker.stop();
    const took = performance.now() - started;
    expect(took).toBeGreaterThanOrEqual(40);
    expect(took).toBeLessThan(1000);
    const claimsAtStop = store.claims.length;
    await sleep(50);
    expect(store.claims.length).toBe(claimsAtStop);
    // The third stays owed; the two unfinished are given back.
    expect(store.due).toHaveLength(1);
    expect(store.released.sort()).toEqual(['d0', 'd1']);
  });

  it('stop() gives back nothing when every attempt finished within the drain bound', async () => {
    const store = outbox(2);
    const worker = new WebhookWorker({
      webhooks: store,
      delivery: { attempt: () => sleep(20).then(() => DELIVERED) },
      concurrency: 2,
      clock: systemClock,
      logger,
      pollIntervalMs: 60_000,
      drainMs: 5000,
    });
    worker.start();
    for (let i = 0; i < 100 && worker.active < 2; i += 1) await sleep(2);
    await worker.stop();
    expect(store.released).toEqual([]);
  });
});
