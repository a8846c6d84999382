import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Inbox, SweepCounts } from '../../src/domain/types.js';
import { StoreUnavailableError } from '../../src/ports/mail-store.js';
import { PostgresRateLimiter } from '../../src/rate-limit/postgres-rate-limiter.js';
import { RATE_LIMIT_TABLE } from '../../src/storage/sql/migrations.js';
import { createPostgresPool, createPostgresStore } from '../../src/storage/sql/postgres-store.js';
import type { SqlMailStore } from '../../src/storage/sql/sql-mail-store.js';
import { addInbox, at, deliver, deliverOne } from '../contract/mail-store-fixtures.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/postgres-test-database.js';

const available = await postgresAvailable('several nodes on one PostgreSQL');

/** Inboxes that expire, each with a message of its own. */
const EXPIRED = 240;
/** Messages each delivered to a group of expired inboxes (content shared by copies). */
const SHARED_GROUP = 6;
/** Sweepers on separate pools, like separate nodes. */
const NODES = 3;
/** Small batches, so the sweepers meet often. */
const BATCH = 25;

/** Inboxes of each kind in the usage-counter run, and messages each receives first. */
const USAGE_INBOXES = 60;
const USAGE_MESSAGES_EACH = 4;

const quietPool = (url: string, poolSize = 5) => createPostgresPool(url, { poolSize, onConnectionError: () => undefined });

describe.skipIf(!available)('several nodes on one PostgreSQL', () => {
  let database: TestDatabase | undefined;
  const stores: SqlMailStore[] = [];
  const node = (): SqlMailStore => {
    if (database === undefined) throw new Error('no test database');
    const store = createPostgresStore(quietPool(database.url));
    stores.push(store);
    return store;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    await node().migrate();
  });
  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
    await database?.drop();
  });

  it('sweepers on every node at once delete each expired inbox once, never deadlock, and never stall deliveries', async () => {
    const seed = node();
    const expired = [];
    for (let i = 0; i < EXPIRED; i += 1) expired.push(await addInbox(seed, { expiresAt: at(10) }));
    const active = await addInbox(seed, { expiresAt: at(1000) });
    for (const inbox of expired) await deliverOne(seed, inbox.id);
    const sharedIds: string[] = [];
    for (let i = 0; i < EXPIRED; i += SHARED_GROUP) {
      // Every third shared message also lands in the active inbox: its content must survive.
      const group = expired.slice(i, i + SHARED_GROUP).map((inbox) => inbox.id);
      const ids = await deliver(seed, i % (3 * SHARED_GROUP) === 0 ? [...group, active.id] : group);
      const kept = ids.get(active.id);
      if (kept !== undefined) sharedIds.push(kept);
    }
    const expiredMessages = EXPIRED + EXPIRED; // one own + one shared copy each

    const sweep = async (store: SqlMailStore): Promise<SweepCounts> => {
      const total = { inboxes: 0, messages: 0, sessions: 0 };
      // Bounded: far more rounds than EXPIRED / BATCH needs.
      for (let round = 0; round < 200; round += 1) {
        const counts = await store.deleteExpired(at(100), BATCH);
        total.inboxes += counts.inboxes;
        total.messages += counts.messages;
        if (counts.inboxes === 0) break;
      }
      return total;
    };
    let sweeping = true;
    const latencies: number[] = [];
    const writer = node();
    const traffic = (async () => {
      for (let i = 0; sweeping && i < 2000; i += 1) {
        const started = performance.now();
        await deliverOne(writer, active.id, { subject: `during-${i}` });
        await writer.listMessages(active.id, { limit: 5 });
        latencies.push(performance.now() - started);
      }
    })();
    const sweepers = Array.from({ length: NODES }, () => sweep(node()));
    const results = await Promise.all(sweepers).finally(() => (sweeping = false));
    await traffic;

    const inboxes = results.reduce((sum, r) => sum + r.inboxes, 0);
    const messages = results.reduce((sum, r) => sum + r.messages, 0);
    expect(inboxes).toBe(EXPIRED);
    expect(messages).toBe(expiredMessages);
    // Work really was shared (SKIP LOCKED), not done by one node while the others waited.
    expect(results.filter((r) => r.inboxes > 0).length).toBeGreaterThan(1);
    expect(await seed.deleteExpired(at(100), BATCH)).toEqual({ inboxes: 0, messages: 0, sessions: 0 });
    for (const id of sharedIds) expect((await seed.findRawMessage(id))?.inboxId).toBe(active.id);
    expect(latencies.length).toBeGreaterThan(0);
    // A delivery and a poll never waited on a sweep's locks for long.
    expect(Math.max(...latencies)).toBeLessThan(2000);

    const pool = quietPool(database?.url ?? '', 1);
    try {
      const left = await pool.query<{ contents: string; messages: string }>(
        'select (select count(*) from contents) as contents, (select count(*) from messages) as messages',
      );
      const during = latencies.length;
      expect(Number(left.rows[0]?.messages)).toBe(sharedIds.length + during);
      // Exactly the contents some copy still refers to: nothing orphaned, nothing deleted twice.
      expect(Number(left.rows[0]?.contents)).toBe(sharedIds.length + during);
    } finally {
      await pool.end();
    }
  });

  it('deliveries, deletions, trims, inbox deletions and sweeps on several nodes keep every usage counter exact, without a deadlock', async () => {
    const url = database?.url ?? '';
    // Stores of their own, closed before the deadlock count is read: a backend reports its
    // statistics to pg_stat_database when it exits at the latest.
    const nodes = Array.from({ length: NODES }, () => createPostgresStore(quietPool(url)));
    const [first, second, third] = nodes;
    if (first === undefined || second === undefined || third === undefined) throw new Error('three nodes expected');
    const deadlocks = async (): Promise<number> => {
      const pool = quietPool(url, 1);
      try {
        const result = await pool.query<{ deadlocks: string }>('select deadlocks from pg_stat_database where datname = current_database()');
        return Number(result.rows[0]?.deadlocks);
      } finally {
        await pool.end();
      }
    };
    const before = await deadlocks();
    /** The expiry of this test's live inboxes (none of the other tests' inboxes has it). */
    const liveUntil = at(2000);
    try {
      const doomed: Inbox[] = [];
      const expiring: Inbox[] = [];
      const active: Inbox[] = [];
      for (let i = 0; i < USAGE_INBOXES; i += 1) {
        doomed.push(await addInbox(first, { expiresAt: liveUntil }));
        expiring.push(await addInbox(first, { expiresAt: at(10) }));
        active.push(await addInbox(first, { expiresAt: liveUntil }));
      }
      // Every message lands in a doomed, an expiring and an active inbox at once (shared contents).
      const copies = new Map<string, string[]>();
      for (let i = 0; i < USAGE_INBOXES; i += 1) {
        for (let m = 0; m < USAGE_MESSAGES_EACH; m += 1) {
          const group = [doomed[i], expiring[i], active[i]].map((inbox) => inbox?.id ?? '');
          for (const [inboxId, messageId] of await deliver(first, group)) copies.set(inboxId, [...(copies.get(inboxId) ?? []), messageId]);
        }
      }
      const ids = (inbox: Inbox | undefined): string[] => copies.get(inbox?.id ?? '') ?? [];
      // Each doomed inbox is deleted on one node while another deletes its messages one by one;
      // expiring inboxes are swept while their messages are deleted; active inboxes get mail and are trimmed.
      await Promise.all([
        ...doomed.map(async (inbox, i) => {
          await Promise.all([
            ...ids(inbox).map((id) => second.deleteMessage(id)),
            first.deleteInbox(inbox.id),
            ...ids(expiring[i]).map((id) => first.deleteMessage(id)),
          ]);
        }),
        (async () => {
          for (let round = 0; round < 200 && (await third.deleteExpired(at(100), 5)).inboxes > 0; round += 1);
        })(),
        ...active.map(async (inbox, i) => {
          for (let m = 0; m < 3; m += 1) await deliver(third, [inbox.id, active[(i + 1) % active.length]?.id ?? '']);
          await first.trimMessages(inbox.id, 2, 3);
          await second.deleteMessage(ids(inbox)[0] ?? '');
        }),
      ]);
    } finally {
      await Promise.all(nodes.map((store) => store.close()));
    }

    const pool = quietPool(url, 1);
    try {
      // Gone: every doomed and expiring inbox. Left: the active ones, each counter equal to a recount.
      const wrong = await pool.query(
        `select i.id, i.message_count, i.byte_count, count(m.id) as counted, coalesce(sum(c.size), 0) as bytes
         from inboxes i left join messages m on m.inbox_id = i.id left join contents c on c.id = m.content_id
         group by i.id, i.message_count, i.byte_count
         having i.message_count <> count(m.id) or i.byte_count <> coalesce(sum(c.size), 0)`,
      );
      expect(wrong.rows).toEqual([]);
      const counted = await pool.query<{ n: string; total: string }>('select count(*) as n, sum(message_count) as total from inboxes where expires_at = $1', [liveUntil.getTime()]);
      expect(Number(counted.rows[0]?.n)).toBe(USAGE_INBOXES);
      expect(Number(counted.rows[0]?.total)).toBeGreaterThan(0);
    } finally {
      await pool.end();
    }
    // The exits of the nodes' backends report their statistics: give them a moment.
    await new Promise((resolve) => setTimeout(resolve, 500));
    // A deadlock would have been retried by the store (and gone unseen) but PostgreSQL counts it.
    expect((await deadlocks()) - before, 'deadlocks PostgreSQL detected during the run').toBe(0);
  });

  it('delivery groups on two nodes to the same inboxes in crossing orders never deadlock, and each stores all', async () => {
    if (database === undefined) throw new Error('no test database');
    const seed = node();
    const [low, high] = [await addInbox(seed), await addInbox(seed)].sort((a, b) => (a.id < b.id ? -1 : 1));
    if (low === undefined || high === undefined) throw new Error('no inboxes');
    const admin = quietPool(database.url, 1);
    const deadlocks = async () =>
      Number((await admin.query<{ n: string }>('select deadlocks as n from pg_stat_database where datname = current_database()')).rows[0]?.n ?? 0);
    try {
      const before = await deadlocks();
      const [a, b] = [node(), node()];
      // Each node's pool has its connection open first, so that both groups start together.
      await Promise.all([deliver(a, [low.id]), deliver(b, [high.id])]);
      // Each node gets its burst in one turn of the event loop, so each writes it as one group:
      // node a's group goes low, high, low, …, node b's high, low, high, …
      const burst = (store: SqlMailStore, first: string, second: string) =>
        Array.from({ length: 20 }, (_, i) => deliver(store, [i % 2 === 0 ? first : second], { subject: `cross-${i}` }));
      const stored = await Promise.all([...burst(a, low.id, high.id), ...burst(b, high.id, low.id)]);
      expect(stored.every((ids) => ids.size === 1)).toBe(true);
      expect(await seed.countMessages(low.id)).toBe(21);
      expect(await seed.countMessages(high.id)).toBe(21);
      // A backend reports its statistics when it ends: close the nodes' pools first.
      await Promise.all([a.close(), b.close()]);
      await new Promise((done) => setTimeout(done, 1500));
      expect(await deadlocks()).toBe(before);
    } finally {
      await admin.end();
    }
  });

  it('fair-use counters are shared: two nodes together grant the budget once', async () => {
    const url = database?.url ?? '';
    const pools = [quietPool(url), quietPool(url)];
    try {
      const [a, b] = pools.map((pool) => new PostgresRateLimiter(pool, RATE_LIMIT_TABLE));
      if (a === undefined || b === undefined) throw new Error('two limiters expected');
      const rule = { name: `shared_${Date.now()}`, points: 5, durationSeconds: 60 };
      const outcomes = [];
      for (let i = 0; i < 8; i += 1) outcomes.push((await (i % 2 === 0 ? a : b).consume(rule, '203.0.113.9')).allowed);
      expect(outcomes).toEqual([true, true, true, true, true, false, false, false]);
      const seen = await a.peek(rule, '203.0.113.9');
      expect(seen).toMatchObject({ allowed: false, remaining: 0, limit: 5 });
      expect(seen.resetSeconds).toBeGreaterThanOrEqual(1);
      // Another key has its own budget.
      expect((await b.consume(rule, '203.0.113.10')).allowed).toBe(true);
      // Concurrent hits from both nodes never overshoot: exactly `points` are granted.
      const burst = { name: `burst_${Date.now()}`, points: 10, durationSeconds: 60 };
      const granted = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? a : b).consume(burst, 'k')));
      expect(granted.filter((d) => d.allowed)).toHaveLength(10);
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
  });

  it('fair-use counters on an unreachable database fail as StoreUnavailableError', async () => {
    const pool = quietPool('postgres://postgres@127.0.0.1:1/nothing');
    try {
      const limiter = new PostgresRateLimiter(pool, RATE_LIMIT_TABLE);
      const rule = { name: 'down', points: 5, durationSeconds: 60 };
      await expect(limiter.consume(rule, 'k')).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(limiter.peek(rule, 'k')).rejects.toBeInstanceOf(StoreUnavailableError);
    } finally {
      await pool.end();
    }
  });
});
