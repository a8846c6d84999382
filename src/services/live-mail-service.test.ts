import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { serviceFixture } from '../../test/helpers/service-fixture.js';
import { STREAM_PING_MS } from '../domain/live-limits.js';
import type { MessageView } from '../domain/types.js';
import type { InboxEventListener, InboxEvents } from '../ports/inbox-events.js';
import { HeldRequests } from './held-requests.js';
import { LiveMailService, type StreamSink } from './live-mail-service.js';

/** A sink that records what a stream wrote, in order. */
function recordingSink() {
  const written: string[] = [];
  const closed = new AbortController();
  const sink: StreamSink = {
    closed: closed.signal,
    message: (message: MessageView) => Promise.resolve(void written.push(`message ${message.subject}`)),
    deleted: (id: string) => Promise.resolve(void written.push(`deleted ${id}`)),
    expired: () => Promise.resolve(void written.push('expired')),
    ping: () => Promise.resolve(void written.push('ping')),
  };
  return { written, sink, close: () => closed.abort() };
}

/** The smallest InboxEvents: listeners per inbox, called at once. */
function memoryEvents(): InboxEvents {
  const listeners = new Map<string, Set<InboxEventListener>>();
  return {
    publish: (event) => {
      if (event.type !== 'resync') for (const listener of listeners.get(event.inboxId) ?? []) listener(event);
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
  const live = new LiveMailService({ store: f.store, clock: { now: () => new Date() }, inboxes: f.inboxes, events, held: new HeldRequests() });
  const { session } = await f.newSession();
  const { inbox } = await f.inboxes.create(session, {}, '127.0.0.1');
  const recorder = recordingSink();
  const held = new HeldRequests();
  const following = live.follow(inbox, undefined, recorder.sink, held.acquire('s', '127.0.0.1'));
  await vi.advanceTimersByTimeAsync(0);
  const deliver = async (subject: string) => {
    await f.send(`${inbox.username}@tempinbox.test`, subject);
    events.publish({ type: 'message', inboxId: inbox.id });
    await vi.advanceTimersByTimeAsync(0);
  };
  return { ...recorder, following, deliver, held, expiresAt: inbox.expiresAt.getTime() };
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

  it('holds one timer while idle, and sends expired at the expiry', async () => {
    const stream = await followed();
    // The wake-up's timer is the stream's only one: it covers the ping and the expiry.
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(stream.expiresAt - Date.now() - 1);
    expect(stream.written.filter((entry) => entry !== 'ping')).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    await stream.following;
    expect(stream.written.at(-1)).toBe('expired');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('ends at shutdown', async () => {
    const stream = await followed();
    stream.held.shutdown();
    await stream.following;
    expect(stream.written).toEqual([]);
  });
});
