import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { serviceFixture, waitForMail } from '../../test/helpers/service-fixture.js';
import { HELD_ANSWER_MAX_BYTES, STREAM_PING_MS } from '../domain/live-limits.js';
import type { MessageView } from '../domain/types.js';
import type { InboxEventListener, InboxEvents } from '../ports/inbox-events.js';
import { IDS } from '../ports/message-reads.js';
import { ClientGone } from './client-gone.js';
import { HeldRequests } from './held-requests.js';
import { LiveMailService, type StreamSink } from './live-mail-service.js';
type MessageSize = (message: MessageView) => number;

/** A sink that records what a stream wrote, in order; `slow` clients take 0-2 ms per message. */
function recordingSink(slow = false) {
  const written: string[] = [];
  const closed = new ClientGone();
  const sink: StreamSink = {
    closed,
    message: async (message: MessageView) => {
      written.push(`message ${message.subject}`);
      if (slow) await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 3)));
    },
    deleted: (id: string) => Promise.resolve(void written.push(`deleted ${id}`)),
    expired: () => Promise.resolve(void written.push('expired')),
    ping: () => Promise.resolve(void written.push('ping')),
  };
  return { written, sink, close: () => closed.raise() };
}

/** The smallest InboxEvents: listeners per inbox, called at once. */
function memoryEvents(): InboxEvents {
  const listeners = new Map<string, Set<InboxEventListener>>();
  return {
    publish: (event) => {
      if (event.type !== 'resync' && event.inboxId !== undefined) for (const listener of listeners.get(event.inboxId) ?? []) listener(event);
    },
    subscribe: (inboxId, listener) => {
      const set = listeners.get(inboxId) ?? new Set();
      listeners.set(inboxId, set.add(listener));
      return () => set.delete(listener);
    },
    start: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
}

/** A followed inbox on fake timers: the service's clock reads the faked Date. */
async function followed() {
  const f = serviceFixture();
  vi.setSystemTime(f.clock.now());
  const events = memoryEvents();
  // Counts the store's message reads.
  const reads = { count: 0 };
  const readPage: typeof f.store.readPage = (...args) => {
    if (args[2] !== IDS) reads.count += 1;
    return f.store.readPage(...args);
  };
  const store = Object.assign(Object.create(f.store) as typeof f.store, { readPage });
  const live = new LiveMailService({ store, clock: { now: () => new Date() }, inboxes: f.inboxes, events, held: new HeldRequests() });
  const { session } = await f.newSession();
  const { inbox } = await f.inboxes.create(session, {}, '127.0.0.1');
  const recorder = recordingSink();
  const held = new HeldRequests();
  const following = live.follow(session, inbox, undefined, recorder.sink, held.acquire('s', '127.0.0.1'));
  await vi.advanceTimersByTimeAsync(0);
  const deliver = async (subject: string) => {
    await f.send(`${inbox.username}@tempinbox.test`, subject);
    events.publish({ type: 'message', inboxId: inbox.id });
    await vi.advanceTimersByTimeAsync(0);
  };
  const discard = async () => {
    await f.inboxes.discard(session, inbox.username);
    events.publish({ type: 'access', inboxId: inbox.id });
    await vi.advanceTimersByTimeAsync(0);
  };
  return { ...recorder, following, deliver, discard, held, reads, expiresAt: inbox.expiresAt.getTime() };
}

describe('LiveMailService.follow timing', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('pings after STREAM_PING_MS without a write, and a message puts the next ping off', async () => {
    const stream = await followed();
    await vi.advanceTimersByTimeAsync(STREAM_PING_MS - 1);
    expect(stream.written).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(stream.written).toEqual(['ping']);
    await vi.advanceTimersByTimeAsync(STREAM_PING_MS / 2);
    await stream.deliver('first');
    await vi.advanceTimersByTimeAsync(STREAM_PING_MS - 1);
    expect(stream.written).toEqual(['ping', 'message first']);
    await vi.advanceTimersByTimeAsync(1);
    expect(stream.written).toEqual(['ping', 'message first', 'ping']);
    stream.close();
    await stream.following;
  });

  it('holds one timer while idle besides the ping sweep of the node, and sends expired at the expiry', async () => {
    const stream = await followed();
    // The wake-up's timer (the expiry) is the stream's only one; pings come from the sweep.
    expect(vi.getTimerCount()).toBe(2);
    await vi.advanceTimersByTimeAsync(stream.expiresAt - Date.now() - 1);
    expect(stream.written.filter((entry) => entry !== 'ping')).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    await stream.following;
    expect(stream.written.at(-1)).toBe('expired');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('reads the store only when woken: an idle stream pings without reading', async () => {
    const stream = await followed();
    const before = stream.reads.count;
    await vi.advanceTimersByTimeAsync(5 * STREAM_PING_MS);
    expect(stream.written).toEqual(['ping', 'ping', 'ping', 'ping', 'ping']);
    expect(stream.reads.count).toBe(before);
    // A message still wakes it, and is read once.
    await stream.deliver('news');
    expect(stream.written.at(-1)).toBe('message news');
    expect(stream.reads.count).toBe(before + 1);
    stream.close();
    await stream.following;
  });

  it('ends, writing nothing more, once its inbox is discarded', async () => {
    const stream = await followed();
    await stream.deliver('before');
    await stream.discard();
    await stream.following;
    expect(stream.written).toEqual(['message before']);
  });

  it('ends at shutdown', async () => {
    const stream = await followed();
    stream.held.shutdown();
    await stream.following;
    expect(stream.written).toEqual([]);
  });

  it('a stream whose hold is already stopped, or whose client already left, ends at once and keeps nothing', async () => {
    const f = serviceFixture();
    vi.setSystemTime(f.clock.now());
    const events = memoryEvents();
    let subscribed = 0;
    const counting: InboxEvents = {
      ...events,
      subscribe: (inboxId, listener) => {
        subscribed += 1;
        const off = events.subscribe(inboxId, listener);
        return () => {
          subscribed -= 1;
          off();
        };
      },
    };
    const live = new LiveMailService({ store: f.store, clock: { now: () => new Date() }, inboxes: f.inboxes, events: counting, held: new HeldRequests() });
    const { session } = await f.newSession();
    const { inbox } = await f.inboxes.create(session, {}, '127.0.0.1');
    const stopped = new HeldRequests();
    const hold = stopped.acquire('s', '127.0.0.1');
    stopped.shutdown();
    const left = recordingSink();
    left.close();
    for (const [sink, stop] of [
      [recordingSink().sink, hold],
      [left.sink, new HeldRequests().acquire('s', '127.0.0.1')],
    ] as const) {
      await live.follow(session, inbox, undefined, sink, stop);
      // No listener, no ping sweep, no expiry timer is left behind.
      expect(subscribed).toBe(0);
      expect(vi.getTimerCount()).toBe(0);
    }
  });
});

describe('LiveMailService: live clients of one inbox share their reads', () => {
  /**
   * The memory store behind a counter of its message reads (readPage, not the ids alone); each answer is computed when
   * the read is asked and handed over after a random 0-3 ms, as a store on another thread
   * would, so reads overlap with deliveries and their events.
   */
  function slowCountingStore(store: ReturnType<typeof serviceFixture>['store']) {
    const counter = { reads: 0 };
    const readPage: typeof store.readPage = async (...args) => {
      if (args[2] !== IDS) counter.reads += 1;
      const answer = await store.readPage(...args);
      await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 4)));
      return answer;
    };
    return { counter, store: Object.assign(Object.create(store) as typeof store, { readPage }) };
  }

  async function streams(count: number) {
    const f = serviceFixture();
    const slow = slowCountingStore(f.store);
    const events = memoryEvents();
    const live = new LiveMailService({ store: slow.store, clock: { now: () => f.clock.now() }, inboxes: f.inboxes, events, held: new HeldRequests() });
    const { session } = await f.newSession();
    const { inbox } = await f.inboxes.create(session, {}, '127.0.0.1');
    const held = new HeldRequests();
    // Clients of differing speed: their reads fall out of step, as real ones do.
    const recorders = Array.from({ length: count }, (_, i) => recordingSink(i % 2 === 1));
    const following = recorders.map((recorder) => live.follow(session, inbox, undefined, recorder.sink, held.acquire('s', '127.0.0.1')));
    const deliver = async (subject: string) => {
      await f.send(`${inbox.username}@tempinbox.test`, subject);
      events.publish({ type: 'message', inboxId: inbox.id });
    };
    const settled = async (expected: string[]) => {
      // Bounded: a stream that missed a message would only see it at the next ping (10 s).
      for (let i = 0; i < 200 && !recorders.every((r) => r.written.length >= expected.length); i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
    };
    const close = async () => {
      for (const recorder of recorders) recorder.close();
      await Promise.all(following);
    };
    return { recorders, deliver, settled, close, counter: slow.counter };
  }

  it('ten streams woken by one message read the store once between them', async () => {
    const ten = await streams(10);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const before = ten.counter.reads;
    await ten.deliver('one');
    await ten.settled(['message one']);
    for (const recorder of ten.recorders) expect(recorder.written).toEqual(['message one']);
    expect(ten.counter.reads - before).toBe(1);
    await ten.close();
  });

  it('while mail keeps arriving during reads, every stream gets every message once, in order', async () => {
    const five = await streams(5);
    const subjects = Array.from({ length: 40 }, (_, i) => `m${i}`);
    for (const subject of subjects) {
      await five.deliver(subject);
      await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 3)));
    }
    const expected = subjects.map((subject) => `message ${subject}`);
    await five.settled(expected);
    for (const recorder of five.recorders) expect(recorder.written).toEqual(expected);
    await five.close();
  });

  it('a stream that starts after a message never takes the answer of a read begun before it', async () => {
    const f = serviceFixture();
    const events = memoryEvents();
    // The next read is answered as of the moment it is asked, and handed over when released.
    let hold: Promise<void> | undefined;
    const readPage: typeof f.store.readPage = async (...args) => {
      const answer = await f.store.readPage(...args);
      if (hold !== undefined && args[2] !== IDS) await hold;
      return answer;
    };
    const store = Object.assign(Object.create(f.store) as typeof f.store, { readPage });
    const live = new LiveMailService({ store, clock: { now: () => f.clock.now() }, inboxes: f.inboxes, events, held: new HeldRequests() });
    const { session } = await f.newSession();
    const { inbox } = await f.inboxes.create(session, {}, '127.0.0.1');
    const first = await f.send(`${inbox.username}@tempinbox.test`, 'm0');
    const held = new HeldRequests();
    let release = () => undefined as void;
    hold = new Promise<void>((resolve) => (release = resolve));
    const a = recordingSink();
    const followingA = live.follow(session, inbox, first, a.sink, held.acquire('s', '127.0.0.1'));
    await new Promise((resolve) => setTimeout(resolve, 5));
    // A's read (after m0) is in flight; m1 is committed and announced; then B starts after m0.
    await f.send(`${inbox.username}@tempinbox.test`, 'm1');
    events.publish({ type: 'message', inboxId: inbox.id });
    hold = undefined;
    const b = recordingSink();
    const followingB = live.follow(session, inbox, first, b.sink, held.acquire('s', '127.0.0.1'));
    await new Promise((resolve) => setTimeout(resolve, 5));
    release();
    // Without the mark, B would share A's older read, see nothing, and wait for the next event.
    for (let i = 0; i < 100 && (a.written.length === 0 || b.written.length === 0); i += 1) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(b.written).toEqual(['message m1']);
    expect(a.written).toEqual(['message m1']);
    a.close();
    b.close();
    await Promise.all([followingA, followingB]);
  });
});

describe('LiveMailService.check reads when it waits', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  async function waiting() {
    const f = serviceFixture();
    vi.setSystemTime(f.clock.now());
    const events = memoryEvents();
    const counts = { pages: 0, ids: 0 };
    const readPage: typeof f.store.readPage = (...args) => {
      if (args[2] === IDS) counts.ids += 1;
      else counts.pages += 1;
      return f.store.readPage(...args);
    };
    const store = Object.assign(Object.create(f.store) as typeof f.store, { readPage });
    // Its first read is the plain check's: that goes through the counted store too.
    const inboxes = f.inboxesOver(store);
    const live = new LiveMailService({ store, clock: { now: () => new Date() }, inboxes, events, held: new HeldRequests() });
    const { session } = await f.newSession();
    const { inbox } = await f.inboxes.create(session, {}, '127.0.0.1');
    const newest = await f.send(`${inbox.username}@tempinbox.test`, 'seen');
    const wait = (seconds: number, sizeOf: MessageSize = (m) => JSON.stringify(m).length) =>
      waitForMail(live, inboxes, session, inbox.username, { sinceId: newest, limit: 10 }, seconds, sizeOf, '127.0.0.1');
    const sendQuietly = (subject: string) => f.send(`${inbox.username}@tempinbox.test`, subject);
    const wake = () => events.publish({ type: 'message', inboxId: inbox.id });
    // What the HTTP route does: the inbox goes, and its held requests are told.
    const discard = async () => {
      await f.inboxes.discard(session, inbox.username);
      events.publish({ type: 'access', inboxId: inbox.id });
    };
    const deliver = async (subject: string) => {
      await f.send(`${inbox.username}@tempinbox.test`, subject);
      events.publish({ type: 'message', inboxId: inbox.id });
    };
    return { wait, deliver, discard, sendQuietly, wake, counts };
  }

  it('a wait after the newest message reads no message until one wakes it (its mark says nothing is new), then one page', async () => {
    const w = await waiting();
    const answer = w.wait(30);
    await vi.advanceTimersByTimeAsync(1000);
    expect(w.counts).toEqual({ pages: 0, ids: 0 });
    await w.deliver('new');
    const page = await answer;
    expect(page.messages.map((m) => m.subject)).toEqual(['new']);
    expect(w.counts).toEqual({ pages: 1, ids: 0 });
  });

  it('a wait that runs out answers count 0 without reading again', async () => {
    const w = await waiting();
    const answer = w.wait(5);
    await vi.advanceTimersByTimeAsync(5000);
    expect((await answer).messages).toEqual([]);
    expect(w.counts).toEqual({ pages: 0, ids: 0 });
  });

  it('answers at most HELD_ANSWER_MAX_BYTES of messages, with has_more for the rest', async () => {
    const w = await waiting();
    // Each message measures 1.5 MiB in the answer: two fit in the held budget of 4 MiB.
    const answer = w.wait(30, () => 1.5 * 1024 * 1024);
    await vi.advanceTimersByTimeAsync(100);
    for (let i = 0; i < 5; i += 1) await w.sendQuietly(`m${i}`);
    w.wake();
    const page = await answer;
    expect(page.messages).toHaveLength(Math.floor(HELD_ANSWER_MAX_BYTES / (1.5 * 1024 * 1024)));
    expect(page.hasMore).toBe(true);
  });

  it('answers inbox_not_found once its inbox is discarded, without waiting for its time to run out', async () => {
    const w = await waiting();
    const answer = w.wait(30);
    const outcome = answer.then(
      () => 'answered',
      (error: unknown) => (error as { code?: string }).code,
    );
    await vi.advanceTimersByTimeAsync(100);
    await w.discard();
    expect(await outcome).toBe('inbox_not_found');
  });
});
