import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../api/api-error.js';
import type { CheckResponse, Message } from '@tempinbox/client';
import { followInbox, POLL_VISIBLE_MS, type FollowerEvents } from './inbox-follower.js';

/** A stand-in for the browser's EventSource: the test opens, feeds and fails it by hand. */
class FakeEventSource {
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSED = 2;
  static all: FakeEventSource[] = [];
  readyState = FakeEventSource.CONNECTING;
  private readonly listeners = new Map<string, Array<(event: { data?: string }) => void>>();
  constructor(readonly url: string) {
    FakeEventSource.all.push(this);
  }
  addEventListener(type: string, listener: (event: { data?: string }) => void) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
  close() {
    this.readyState = FakeEventSource.CLOSED;
  }
  emit(type: string, data?: string) {
    if (type === 'open') this.readyState = FakeEventSource.OPEN;
    for (const listener of this.listeners.get(type) ?? []) listener({ data });
  }
}

function message(id: string): Message {
  return { id, from: 'a@example.org', to: 'x@tempinbox.test', subject: id, body: '', html: null, date: '2030-01-01T00:00:00.000Z', attachments: [], recipient: 'x@tempinbox.test', codes: [], links: [], auth: null, truncated: false };
}

/** A check whose answers the test releases one by one, counting how many run at once. */
function controlledCheck() {
  const pending: Array<{ since?: string; answer: (result: CheckResponse) => void; fail: (error: unknown) => void }> = [];
  let running = 0;
  let most = 0;
  const check = (_username: string, since?: string) => {
    running += 1;
    most = Math.max(most, running);
    return new Promise<CheckResponse>((resolve, reject) => {
      pending.push({
        since,
        answer: (result) => { running -= 1; resolve(result); },
        fail: (error) => { running -= 1; reject(error); },
      });
    });
  };
  return { check, pending, most: () => most };
}

function recorder(): FollowerEvents & { log: string[] } {
  const log: string[] = [];
  return {
    log,
    checked: (emails, full) => log.push(`checked ${full ? 'full' : 'since'} ${emails.map((m) => m.id).join(',')}`),
    arrived: (m) => log.push(`arrived ${m.id}`),
    deleted: (id) => log.push(`deleted ${id}`),
    expired: () => log.push('expired'),
    live: (mode) => log.push(`live ${mode}`),
    failed: (error, final) => log.push(`failed ${(error as ApiError).code}${final ? ' final' : ''}`),
    recovered: () => log.push('recovered'),
  };
}

const flush = () => vi.advanceTimersByTimeAsync(0);

describe('followInbox', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    FakeEventSource.all = [];
    vi.stubGlobal('window', globalThis);
    vi.stubGlobal('document', { hidden: false, addEventListener: () => undefined, removeEventListener: () => undefined });
    vi.stubGlobal('EventSource', FakeEventSource);
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  const deps = (check: ReturnType<typeof controlledCheck>['check'], newest = () => 'n1' as string | undefined) => ({
    check,
    eventsUrl: (username: string, since?: string) => `/api/inbox/${username}/events${since ? `?since=${since}` : ''}`,
    newestId: newest,
  });

  it('lists first, then opens the stream after the newest message, and does not poll while it is open', async () => {
    const api = controlledCheck();
    const events = recorder();
    const stop = followInbox('alice', deps(api.check), events);
    expect(api.pending).toHaveLength(1);
    expect(api.pending[0]?.since).toBeUndefined();
    api.pending[0]?.answer({ success: true, has_more: false, count: 1, emails: [message('n1')] });
    await flush();
    const stream = FakeEventSource.all[0];
    expect(stream?.url).toBe('/api/inbox/alice/events?since=n1');
    stream?.emit('open');
    // The catch-up check after connecting; then nothing more while the stream is open.
    expect(api.pending).toHaveLength(2);
    expect(api.pending[1]?.since).toBe('n1');
    api.pending[1]?.answer({ success: true, has_more: false, count: 0, emails: [] });
    await vi.advanceTimersByTimeAsync(POLL_VISIBLE_MS * 10);
    expect(api.pending).toHaveLength(2);
    stream?.emit('message', JSON.stringify(message('n2')));
    stream?.emit('deleted', JSON.stringify({ id: 'n1' }));
    stream?.emit('message', 'not json');
    expect(events.log).toEqual(['checked full n1', 'live stream', 'checked since ', 'arrived n2', 'deleted n1']);
    stop();
  });

  it('polls with since when the stream is refused (404 on an older server), one check at a time', async () => {
    const api = controlledCheck();
    const events = recorder();
    const stop = followInbox('alice', deps(api.check), events);
    api.pending[0]?.answer({ success: true, has_more: false, count: 0, emails: [] });
    await flush();
    const stream = FakeEventSource.all[0];
    expect(stream?.url).toBe('/api/inbox/alice/events');
    stream!.readyState = FakeEventSource.CLOSED;
    stream?.emit('error');
    expect(events.log).toContain('live polling');
    await vi.advanceTimersByTimeAsync(POLL_VISIBLE_MS);
    expect(api.pending).toHaveLength(2);
    expect(api.pending[1]?.since).toBe('n1');
    // A slow answer: no second poll starts while it is out.
    await vi.advanceTimersByTimeAsync(POLL_VISIBLE_MS * 5);
    expect(api.pending).toHaveLength(2);
    api.pending[1]?.answer({ success: true, has_more: false, count: 1, emails: [message('n2')] });
    await vi.advanceTimersByTimeAsync(POLL_VISIBLE_MS);
    expect(api.pending).toHaveLength(3);
    expect(api.most()).toBe(1);
    // A 404 stream is tried again only after minutes, not on every poll.
    expect(FakeEventSource.all).toHaveLength(1);
    stop();
  });

  it('coalesces a check asked for while one runs into one more after it', async () => {
    const api = controlledCheck();
    const stop = followInbox('alice', deps(api.check), recorder());
    api.pending[0]?.answer({ success: true, has_more: false, count: 0, emails: [] });
    await flush();
    const stream = FakeEventSource.all[0]!;
    stream.emit('open'); // catch-up check 2 starts
    stream.emit('open'); // asked again while it runs
    stream.emit('open');
    expect(api.pending).toHaveLength(2);
    api.pending[1]?.answer({ success: true, has_more: false, count: 0, emails: [] });
    await flush();
    expect(api.pending).toHaveLength(3);
    api.pending[2]?.answer({ success: true, has_more: false, count: 0, emails: [] });
    await flush();
    expect(api.pending).toHaveLength(3);
    expect(api.most()).toBe(1);
    stop();
  });

  it('stops for good on session_required and reports it as final', async () => {
    const api = controlledCheck();
    const events = recorder();
    followInbox('alice', deps(api.check), events);
    api.pending[0]?.fail(new ApiError('session_required', 401));
    await vi.advanceTimersByTimeAsync(POLL_VISIBLE_MS * 20);
    expect(events.log).toEqual(['failed session_required final']);
    expect(api.pending).toHaveLength(1);
    expect(FakeEventSource.all).toHaveLength(0);
  });

  it('backs off on network errors and says when it recovered', async () => {
    const api = controlledCheck();
    const events = recorder();
    const stop = followInbox('alice', deps(api.check), events);
    api.pending[0]?.fail(new ApiError('network', 0));
    await vi.advanceTimersByTimeAsync(POLL_VISIBLE_MS);
    expect(api.pending).toHaveLength(1); // waits twice as long
    await vi.advanceTimersByTimeAsync(POLL_VISIBLE_MS);
    expect(api.pending).toHaveLength(2);
    api.pending[1]?.answer({ success: true, has_more: false, count: 0, emails: [] });
    await flush();
    expect(events.log).toEqual(['failed network', 'checked full ', 'recovered']);
    stop();
  });

  it('ends on the expired event and closes the stream', async () => {
    const api = controlledCheck();
    const events = recorder();
    followInbox('alice', deps(api.check), events);
    api.pending[0]?.answer({ success: true, has_more: false, count: 0, emails: [] });
    await flush();
    const stream = FakeEventSource.all[0]!;
    stream.emit('open');
    stream.emit('expired');
    expect(events.log.at(-1)).toBe('expired');
    expect(stream.readyState).toBe(FakeEventSource.CLOSED);
  });
});
