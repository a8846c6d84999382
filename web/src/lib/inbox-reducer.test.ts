import { describe, expect, it } from 'vitest';
import type { SessionInbox, Message, SessionResponse } from '@tempinbox/client';
import { FREE_MODE, inboxReducer, INITIAL_STATE, type InboxAction, type InboxState } from './inbox-reducer.js';

function inbox(username: string, count = 0): SessionInbox {
  return { email: `${username}@tempinbox.test`, username, domain: 'tempinbox.test', ttl: 2592000, expires_at: '2030-01-01T00:00:00.000Z', created_at: '2029-12-01T00:00:00.000Z', count };
}

function message(id: string, second: number): Message {
  return { id, from: 'a@example.org', to: 'x@tempinbox.test', subject: `s-${id}`, body: 'b', html: null, date: `2029-12-01T00:00:${String(second).padStart(2, '0')}.000Z`, attachments: [], recipient: 'x@tempinbox.test', codes: [], links: [], auth: null, truncated: false };
}

function run(state: InboxState, ...actions: InboxAction[]): InboxState {
  return actions.reduce(inboxReducer, state);
}

const countOf = (state: InboxState, username: string) => state.inboxes.find((item) => item.username === username)?.count;

/** Premium with two inboxes, "alpha" shown; the server counted alpha 3 and beta 1. */
const twoInboxes = run(INITIAL_STATE, { type: 'booted', inboxes: [inbox('alpha', 3), inbox('beta', 1)], current: 'alpha' });
const alphaMail = [message('a3', 30), message('a2', 20), message('a1', 10)];

describe('inboxReducer: counts', () => {
  it('keeps the server count after switching away and back (3 stay 3, not 6)', () => {
    const state = run(
      twoInboxes,
      { type: 'checked', username: 'alpha', emails: alphaMail, full: true, hasMore: false },
      { type: 'select', username: 'beta' },
      { type: 'checked', username: 'beta', emails: [message('b1', 5)], full: true, hasMore: false },
      { type: 'select', username: 'alpha' },
      { type: 'checked', username: 'alpha', emails: alphaMail, full: true, hasMore: false },
    );
    expect(countOf(state, 'alpha')).toBe(3);
    expect(countOf(state, 'beta')).toBe(1);
    expect(state.messages.map((m) => m.id)).toEqual(['a3', 'a2', 'a1']);
  });

  it('takes the count of a full listing even when the session count was stale', () => {
    const state = run(twoInboxes, { type: 'checked', username: 'alpha', emails: alphaMail.slice(0, 2), full: true, hasMore: false });
    expect(countOf(state, 'alpha')).toBe(2);
  });

  it('keeps the larger server count when the listing left older messages out (has_more)', () => {
    const start = run(INITIAL_STATE, { type: 'booted', inboxes: [inbox('alpha', 150)], current: 'alpha' });
    const state = run(
      start,
      { type: 'checked', username: 'alpha', emails: alphaMail, full: true, hasMore: true },
      { type: 'arrived', username: 'alpha', message: message('a4', 40) },
    );
    expect(state.hasMore).toBe(true);
    expect(countOf(state, 'alpha')).toBe(151);
  });

  it('counts a message once when the stream and a catch-up check both deliver it', () => {
    const state = run(
      twoInboxes,
      { type: 'checked', username: 'alpha', emails: alphaMail, full: true, hasMore: false },
      { type: 'arrived', username: 'alpha', message: message('a4', 40) },
      { type: 'checked', username: 'alpha', emails: [message('a5', 50), message('a4', 40)], full: false, hasMore: false },
      { type: 'arrived', username: 'alpha', message: message('a5', 50) },
    );
    expect(countOf(state, 'alpha')).toBe(5);
    expect(state.messages.map((m) => m.id)).toEqual(['a5', 'a4', 'a3', 'a2', 'a1']);
  });

  it('orders by receive time whichever transport answered first', () => {
    const state = run(
      twoInboxes,
      { type: 'checked', username: 'alpha', emails: [], full: true, hasMore: false },
      { type: 'arrived', username: 'alpha', message: message('new', 50) },
      { type: 'checked', username: 'alpha', emails: [message('old', 40)], full: false, hasMore: false },
    );
    expect(state.messages.map((m) => m.id)).toEqual(['new', 'old']);
  });

  it('ignores an answer for an inbox that is no longer shown', () => {
    const state = run(
      twoInboxes,
      { type: 'select', username: 'beta' },
      { type: 'checked', username: 'alpha', emails: alphaMail, full: true, hasMore: false },
    );
    expect(state.messages).toEqual([]);
    expect(state.loaded).toBe(false);
    expect(countOf(state, 'alpha')).toBe(3);
  });

  it('decrements once per deleted message, and not for one already gone', () => {
    const state = run(
      twoInboxes,
      { type: 'checked', username: 'alpha', emails: alphaMail, full: true, hasMore: false },
      { type: 'deleted', username: 'alpha', id: 'a2' },
      { type: 'deleted', username: 'alpha', id: 'a2' },
    );
    expect(countOf(state, 'alpha')).toBe(2);
    expect(state.messages.map((m) => m.id)).toEqual(['a3', 'a1']);
  });

  it('keeps the shown inbox count when a session answer arrives, and takes the others from it', () => {
    const session: SessionResponse = { success: true, premium: true, premium_until: null, limits: FREE_MODE.limits, inboxes: [inbox('alpha', 0), inbox('beta', 7)] };
    const state = run(twoInboxes, { type: 'checked', username: 'alpha', emails: alphaMail, full: true, hasMore: false }, { type: 'session', session });
    expect(countOf(state, 'alpha')).toBe(3);
    expect(countOf(state, 'beta')).toBe(7);
    expect(state.mode.premium).toBe(true);
  });

  it('keeps the switcher order on a session answer and adds the inboxes it did not show yet', () => {
    const session: SessionResponse = { success: true, premium: true, premium_until: null, limits: FREE_MODE.limits, inboxes: [inbox('gamma', 2), inbox('beta', 1), inbox('alpha', 3)] };
    const state = run(twoInboxes, { type: 'session', session });
    expect(state.inboxes.map((item) => item.username)).toEqual(['alpha', 'beta', 'gamma']);
    expect(countOf(state, 'gamma')).toBe(2);
  });
});

describe('inboxReducer: arrivals, expiry and full messages', () => {
  it('announces new mail but not what the inbox already held', () => {
    const first = run(twoInboxes, { type: 'checked', username: 'alpha', emails: alphaMail, full: true, hasMore: false });
    expect(first.announcement).toBe('');
    const next = run(first, { type: 'arrived', username: 'alpha', message: message('a4', 40) });
    expect(next.announcement).toBe('New message from a@example.org: s-a4');
    const two = run(next, { type: 'checked', username: 'alpha', emails: [message('a6', 59), message('a5', 50)], full: false, hasMore: false });
    expect(two.announcement).toBe('2 new messages');
  });

  it('replaces a truncated message with the whole one, keeping fields the detail lacks', () => {
    const cut: Message = { ...message('t', 1), body: 'cut', truncated: true, codes: ['482913'] };
    // The detail of an older server, without `codes`.
    const { codes: _lacking, ...detail } = { ...message('t', 1), body: 'the whole text' };
    const whole = detail as Message;
    const state = run(
      twoInboxes,
      { type: 'checked', username: 'alpha', emails: [cut], full: true, hasMore: false },
      { type: 'fullMessage', message: whole },
      // A later listing of the same message must not bring the cut copy back.
      { type: 'checked', username: 'alpha', emails: [cut], full: false, hasMore: false },
    );
    expect(state.messages[0]).toMatchObject({ body: 'the whole text', truncated: false, codes: ['482913'] });
  });

  it('clears a network notice once the server answers again, but not a newer one', () => {
    const network = run(twoInboxes, { type: 'notice', notice: { kind: 'error', text: 'offline' } }, { type: 'clearNotice', text: 'offline' });
    expect(network.notice).toBeNull();
    const other = run(twoInboxes, { type: 'notice', notice: { kind: 'error', text: 'other' } }, { type: 'clearNotice', text: 'offline' });
    expect(other.notice?.text).toBe('other');
  });

  it('marks an inbox expired once', () => {
    const state = run(twoInboxes, { type: 'expired', username: 'alpha' }, { type: 'expired', username: 'alpha' });
    expect(state.expiredNames).toEqual(['alpha']);
  });
});

describe('inboxReducer: session lost (401) and recovery', () => {
  it('stops following on session_required and works again after a new start', () => {
    const lost = run(
      twoInboxes,
      { type: 'checked', username: 'alpha', emails: alphaMail, full: true, hasMore: false },
      { type: 'busy', busy: true },
      { type: 'notice', notice: { kind: 'error', text: 'Cannot reach the server.' } },
      { type: 'sessionLost' },
    );
    expect(lost.sessionLost).toBe(true);
    expect(lost.busy).toBe(false);
    expect(lost.notice).toBeNull();

    const fresh = inbox('gamma');
    const back = run(lost, { type: 'booting' }, { type: 'booted', inboxes: [fresh], current: 'gamma', mode: FREE_MODE });
    expect(back.sessionLost).toBe(false);
    expect(back.phase).toBe('ready');
    expect(back.notice).toBeNull();
    expect(back.currentName).toBe('gamma');
    expect(back.messages).toEqual([]);
    const working = run(back, { type: 'checked', username: 'gamma', emails: [message('g1', 1)], full: true, hasMore: false });
    expect(working.messages.map((m) => m.id)).toEqual(['g1']);
    expect(countOf(working, 'gamma')).toBe(1);
  });
});

describe('inboxReducer: inboxes', () => {
  it('adds a new inbox in front, replacing the discarded one, and shows it', () => {
    const state = run(twoInboxes, { type: 'added', inbox: { success: true, ...inbox('gamma') }, replacing: 'alpha' });
    expect(state.inboxes.map((item) => item.username)).toEqual(['gamma', 'beta']);
    expect(state.currentName).toBe('gamma');
  });

  it('shows the next inbox when the current one is discarded', () => {
    const state = run(twoInboxes, { type: 'discarded', username: 'alpha' });
    expect(state.currentName).toBe('beta');
    expect(state.inboxes.map((item) => item.username)).toEqual(['beta']);
  });
});
