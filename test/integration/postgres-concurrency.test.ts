import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import type { Inbox, SweepCounts } from '../../src/domain/types.js';
import { StoreUnavailableError } from '../../src/ports/mail-store.js';
import { PostgresRateLimiter } from '../../src/rate-limit/postgres-rate-limiter.js';
import { RATE_LIMIT_TABLE } from '../../src/storage/sql/migrations.js';
import { createPostgresPool, createPostgresStore } from '../../src/storage/sql/postgres-store.js';
import type { SqlMailStore } from '../../src/storage/sql/sql-mail-store.js';
import { addInbox, at, deliver, deliverOne, makeLicense, makeSession } from '../contract/mail-store-fixtures.js';
import { createTestDatabase, postgresAvailable, type TestDatabase } from '../helpers/postgres-test-database.js';
import { countMessages, listMessages } from '../helpers/store-reads.js';

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

/** Inboxes of the recount run (every tenth expires and is swept meanwhile). */
const RECOUNT_INBOXES = 60;
/** Rounds of corrupting every counter and recounting them while other nodes write. */
const RECOUNT_ROUNDS = 4;
/** Sessions per round whose inboxes a license adopts during the recount. */
const RECOUNT_REDEEMS_PER_ROUND = 5;
/** Inboxes per recount batch: small, so the batches and the writers meet often. */
const RECOUNT_BATCH = 8;
/** Delivery loops running at once during the recount. */
const RECOUNT_WRITERS = 4;

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
        await listMessages(writer, active.id, { limit: 5 });
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

  it('a usage recount on one node while others deliver, delete, trim, sweep and redeem leaves every counter exact, without a deadlock', async () => {
    const url = database?.url ?? '';
    // Nodes of their own, closed before the deadlock count is read (see the test above).
    const nodes = Array.from({ length: NODES }, () => createPostgresStore(quietPool(url)));
    const [recounter, writer, deleter] = nodes;
    if (recounter === undefined || writer === undefined || deleter === undefined) throw new Error('three nodes expected');
    const admin = quietPool(url, 1);
    const deadlocks = async (): Promise<number> =>
      Number((await admin.query<{ n: string }>('select deadlocks as n from pg_stat_database where datname = current_database()')).rows[0]?.n ?? 0);
    /** Inboxes whose counters differ from a count of their copies (every inbox of the database). */
    const wrongCounters = async (): Promise<unknown[]> =>
      (
        await admin.query(
          `select i.id, i.message_count, i.byte_count, count(m.id) as counted, coalesce(sum(c.size), 0) as bytes
           from inboxes i left join messages m on m.inbox_id = i.id left join contents c on c.id = m.content_id
           group by i.id, i.message_count, i.byte_count
           having i.message_count <> count(m.id) or i.byte_count <> coalesce(sum(c.size), 0)`,
        )
      ).rows;
    const before = await deadlocks();
    try {
      const inboxes: Inbox[] = [];
      for (let i = 0; i < RECOUNT_INBOXES; i += 1) inboxes.push(await addInbox(writer, { expiresAt: i % 10 === 0 ? at(10) : at(3000) }));
      const pick = (): string => inboxes[Math.floor(Math.random() * inboxes.length)]?.id ?? '';
      const delivered: string[] = [];
      for (const inbox of inboxes) for (const id of (await deliver(writer, [inbox.id, pick()])).values()) delivered.push(id);
      // Premium candidates: sessions with several free inboxes, adopted by a license each during
      // the runs (redeemLicense updates several inbox rows in one transaction).
      const owners = [];
      for (let i = 0; i < RECOUNT_REDEEMS_PER_ROUND * RECOUNT_ROUNDS; i += 1) {
        const session = makeSession();
        const license = makeLicense();
        await writer.insertSession(session);
        await writer.insertLicenses([license]);
        for (let k = 0; k < 4; k += 1) {
          const inbox = await addInbox(writer, { expiresAt: at(3000), sessionId: session.id });
          await deliverOne(writer, inbox.id);
          inboxes.push(inbox);
        }
        owners.push({ session, license });
      }

      // Each round: counters as nodes of an earlier release leave them (every inbox off), then one
      // recount pass in small batches while the other nodes write, then the check. A write that
      // slipped between a batch's count and its update would leave its inbox wrong here.
      for (let round = 0; round < RECOUNT_ROUNDS; round += 1) {
        await admin.query('update inboxes set message_count = message_count + 3, byte_count = byte_count + 7');
        let recounting = true;
        const recount = (async () => {
          let checked = 0;
          let afterId: string | undefined;
          for (let batch = 0; batch < 10_000; batch += 1) {
            const result = await recounter.recountUsage(afterId === undefined ? { limit: RECOUNT_BATCH } : { afterId, limit: RECOUNT_BATCH });
            checked += result.checked;
            if (result.checked < RECOUNT_BATCH) break;
            afterId = result.lastId;
          }
          return checked;
        })().finally(() => (recounting = false));
        const deliveries = async () => {
          // Two or three inboxes a message, in any order (each delivery locks them in id order).
          for (let i = 0; recounting; i += 1) await deliver(writer, i % 2 === 0 ? [pick(), pick()] : [pick(), pick(), pick()]);
        };
        const deletions = (async () => {
          for (let i = 0; recounting; i += 1) {
            const id = delivered.pop();
            if (id !== undefined) await deleter.deleteMessage(id);
            await deleter.trimMessages(pick(), 2, 1);
            if (i % 10 === 0) await deleter.deleteExpired(at(100), 3);
            if (i % 25 === 24) await deleter.deleteInbox(pick());
          }
        })();
        const redeems = (async () => {
          for (const { session, license } of owners.splice(0, RECOUNT_REDEEMS_PER_ROUND)) {
            expect(await writer.redeemLicense(session.id, license.id, at(1), { maxInboxes: 10, premiumTtlMs: 3_000 * 60_000 })).toBe('redeemed');
          }
        })();
        const [checked] = await Promise.all([recount, ...Array.from({ length: RECOUNT_WRITERS }, deliveries), deletions, redeems]);
        expect(checked).toBeGreaterThan(RECOUNT_BATCH);
        expect(await wrongCounters(), `round ${round}`).toEqual([]);
      }
    } finally {
      await Promise.all(nodes.map((store) => store.close()));
    }
    try {
      // The exits of the nodes' backends report their statistics: give them a moment.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      // A deadlock would have been retried by the store (and gone unseen) but PostgreSQL counts it.
      expect((await deadlocks()) - before, 'deadlocks PostgreSQL detected during the run').toBe(0);
    } finally {
      await admin.end();
    }
  });

  it('a redeem adopting several inboxes and a usage recount over them wait for each other without a deadlock', async () => {
    const url = database?.url ?? '';
    const [recounter, redeemer] = [createPostgresStore(quietPool(url)), createPostgresStore(quietPool(url))];
    const admin = quietPool(url, 2);
    const deadlocks = async (): Promise<number> =>
      Number((await admin.query<{ n: string }>('select deadlocks as n from pg_stat_database where datname = current_database()')).rows[0]?.n ?? 0);
    /** Resolves once `n` backends of this database wait for a lock. */
    const waiting = async (n: number): Promise<void> => {
      for (let poll = 0; poll < 500; poll += 1) {
        const result = await admin.query<{ n: string }>("select count(*) as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'");
        if (Number(result.rows[0]?.n) >= n) return;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error(`${n} lock waits expected`);
    };
    const before = await deadlocks();
    const holder = await admin.connect();
    try {
      // Two free inboxes of one session: the newer has the higher id. Redeem adopts newest first.
      const session = makeSession();
      const license = makeLicense();
      await redeemer.insertSession(session);
      await redeemer.insertLicenses([license]);
      // Ids next to each other, so the recount's batch after their common prefix is the two.
      const prefix = newId().slice(0, -1);
      const [low, high] = [`${prefix}A`, `${prefix}B`];
      const older = await addInbox(redeemer, { id: low, sessionId: session.id, expiresAt: at(3000), createdAt: at(0) });
      await addInbox(redeemer, { id: high, sessionId: session.id, expiresAt: at(3000), createdAt: at(1) });
      // Forces the crossing: another transaction holds the older (lower) inbox; the recount locks
      // up to it and waits there; the redeem comes next. Updating newest first, the redeem would
      // take the newer row and then queue for the older one behind the recount, which, granted
      // it, would wait for the newer: a deadlock. In id order the redeem takes nothing before it.
      await holder.query('begin');
      await holder.query('select id from inboxes where id = $1 for update', [older.id]);
      const recount = recounter.recountUsage({ afterId: prefix, limit: 2 });
      await waiting(1);
      const redeem = redeemer.redeemLicense(session.id, license.id, at(2), { maxInboxes: 10, premiumTtlMs: 3_000 * 60_000 });
      await waiting(2);
      await holder.query('commit');
      expect(await redeem).toBe('redeemed');
      expect(await recount).toEqual({ checked: 2, corrected: 0, lastId: high });
      expect((await redeemer.listActiveInboxes({ sessionId: session.id, licenseId: license.id }, at(2))).length).toBe(2);
    } finally {
      holder.release();
      await Promise.all([recounter.close(), redeemer.close()]);
    }
    try {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect((await deadlocks()) - before, 'deadlocks PostgreSQL detected').toBe(0);
    } finally {
      await admin.end();
    }
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
      expect(await countMessages(seed, low.id)).toBe(21);
      expect(await countMessages(seed, high.id)).toBe(21);
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
