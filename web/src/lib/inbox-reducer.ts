import type { InboxResponse, SessionInbox, Limits, Message, SessionResponse } from '@tempinbox/client';
import { showBidiControls } from './bidi-text.js';
import { mergeMessages } from './merge-messages.js';

/** A notice above the inbox: an error, a rate limit, or a success. */
export interface Notice {
  kind: 'error' | 'success' | 'info';
  text: string;
}

/** Mode and limits of the session, as the page shows them. */
export interface SessionMode {
  premium: boolean;
  premiumUntil: string | null;
  limits: Limits;
}

/** How the open inbox is followed: the event stream, or polling with `since` (docs/web.md). */
export type LiveMode = 'stream' | 'polling';

/** Everything the page shows, in one place; changed only by `inboxReducer`. */
export interface InboxState {
  phase: 'loading' | 'ready' | 'failed';
  mode: SessionMode;
  inboxes: SessionInbox[];
  currentName: string | null;
  /** Messages of the current inbox, newest first. */
  messages: Message[];
  /** Whether the first check of the current inbox has answered (empty state vs. loading). */
  loaded: boolean;
  /** The server left older messages out of the listing (`has_more`). */
  hasMore: boolean;
  expiredNames: readonly string[];
  /** The session cookie is gone (`401 session_required`): following stops until a new start. */
  sessionLost: boolean;
  live: LiveMode;
  notice: Notice | null;
  /** Text for the polite live region: new mail, copy confirmations. */
  announcement: string;
  busy: boolean;
}

/** What can happen to the page's state. */
export type InboxAction =
  | { type: 'booting' }
  | { type: 'booted'; inboxes: SessionInbox[]; current: string; mode?: SessionMode }
  | { type: 'bootFailed'; notice: Notice }
  | { type: 'session'; session: SessionResponse }
  | { type: 'select'; username: string }
  /** A check answered: `full` when it listed the inbox from the top (no `since`). */
  | { type: 'checked'; username: string; emails: Message[]; full: boolean; hasMore: boolean }
  | { type: 'arrived'; username: string; message: Message }
  | { type: 'deleted'; username: string; id: string }
  | { type: 'expired'; username: string }
  | { type: 'fullMessage'; message: Message }
  | { type: 'added'; inbox: InboxResponse; replacing?: string }
  | { type: 'discarded'; username: string }
  | { type: 'lostAddress' }
  | { type: 'sessionLost' }
  | { type: 'live'; live: LiveMode }
  | { type: 'notice'; notice: Notice | null }
  /** Removes the error notice only if it still says `text` (a newer notice stays). */
  | { type: 'clearNotice'; text: string }
  | { type: 'announce'; text: string }
  | { type: 'busy'; busy: boolean };

/** A free session's mode until the server says otherwise. */
export const FREE_MODE: SessionMode = { premium: false, premiumUntil: null, limits: { max_inboxes: 1, ttl: 1800, custom_usernames: false } };

/** The state before anything is loaded. */
export const INITIAL_STATE: InboxState = {
  phase: 'loading',
  mode: FREE_MODE,
  inboxes: [],
  currentName: null,
  messages: [],
  loaded: false,
  hasMore: false,
  expiredNames: [],
  sessionLost: false,
  live: 'polling',
  notice: null,
  announcement: '',
  busy: false,
};

function setCount(inboxes: SessionInbox[], username: string, count: (old: number) => number): SessionInbox[] {
  return inboxes.map((inbox) => (inbox.username === username ? { ...inbox, count: Math.max(0, count(inbox.count)) } : inbox));
}

function countOf(state: InboxState, username: string): number {
  return state.inboxes.find((inbox) => inbox.username === username)?.count ?? 0;
}

function summary(inbox: InboxResponse): SessionInbox {
  return { ...inbox, count: 0 };
}

/** Newly received messages in words for the live region. */
function arrivalText(fresh: Message[]): string {
  const first = fresh[0];
  if (fresh.length !== 1 || first === undefined) return `${fresh.length} new messages`;
  // Read aloud from mail-derived text: any direction control said as its name.
  return `New message from ${showBidiControls(first.from)}: ${showBidiControls(first.subject || '(no subject)')}`;
}

/** Messages of the current inbox: ignored when they answer for an inbox no longer shown. */
function receive(state: InboxState, username: string, emails: Message[], full: boolean, hasMore: boolean): InboxState {
  if (username !== state.currentName) return state;
  const known = new Set(state.messages.map((message) => message.id));
  const fresh = emails.filter((message) => !known.has(message.id));
  const messages = mergeMessages(state.messages, emails);
  // A listing from the top is the server's own count (all of it unless it left older ones
  // out); later answers only add the messages not seen before, so nothing is counted twice.
  const inboxes = full
    ? setCount(state.inboxes, username, (old) => (hasMore ? Math.max(old, messages.length) : messages.length))
    : setCount(state.inboxes, username, (old) => old + fresh.length);
  // The first listing is what the inbox already held: nothing to announce.
  const announcement = state.loaded && fresh.length > 0 ? arrivalText(fresh) : state.announcement;
  return { ...state, messages, inboxes, loaded: true, hasMore: full ? hasMore : state.hasMore, announcement };
}

/** The page's state transitions: pure, so each one is unit-tested (inbox-reducer.test.ts). */
export function inboxReducer(state: InboxState, action: InboxAction): InboxState {
  switch (action.type) {
    case 'booting':
      return { ...state, phase: 'loading' };
    case 'booted':
      return {
        ...state,
        phase: 'ready',
        inboxes: action.inboxes,
        mode: action.mode ?? state.mode,
        currentName: action.current,
        messages: [],
        loaded: false,
        hasMore: false,
        sessionLost: false,
        notice: null,
      };
    case 'bootFailed':
      return { ...state, phase: 'failed', notice: action.notice };
    case 'session': {
      const { session } = action;
      const mode = { premium: session.premium, premiumUntil: session.premium_until, limits: session.limits };
      if (session.inboxes.length === 0) return { ...state, mode };
      // The server's inboxes and counts in the order already shown (new ones after them),
      // except the count of the inbox on screen once loaded: its own listing is newer.
      const fromServer = new Map(session.inboxes.map((inbox) => [inbox.username, inbox]));
      const shownNames = new Set(state.inboxes.map((inbox) => inbox.username));
      const inboxes = [...state.inboxes.map((inbox) => fromServer.get(inbox.username) ?? inbox), ...session.inboxes.filter((inbox) => !shownNames.has(inbox.username))]
        .map((inbox) => (state.loaded && inbox.username === state.currentName ? { ...inbox, count: countOf(state, inbox.username) } : inbox));
      return { ...state, mode, inboxes };
    }
    case 'select':
      return { ...state, currentName: action.username, messages: [], loaded: false, hasMore: false };
    case 'checked':
      return receive(state, action.username, action.emails, action.full, action.hasMore);
    case 'arrived':
      return receive(state, action.username, [action.message], false, false);
    case 'deleted': {
      if (action.username !== state.currentName) return state;
      const listed = state.messages.some((message) => message.id === action.id);
      // Not listed: gone already (a second delete), unless it was one of the older ones left out.
      if (!listed && !state.hasMore) return state;
      return {
        ...state,
        messages: state.messages.filter((message) => message.id !== action.id),
        inboxes: setCount(state.inboxes, action.username, (old) => old - 1),
      };
    }
    case 'expired':
      return state.expiredNames.includes(action.username) ? state : { ...state, expiredNames: [...state.expiredNames, action.username] };
    case 'fullMessage':
      return {
        ...state,
        // Fields the detail lacks (an older server) keep the listing's value.
        messages: state.messages.map((message) => (message.id === action.message.id ? { ...message, ...action.message, truncated: false } : message)),
      };
    case 'added':
      return {
        ...state,
        inboxes: [summary(action.inbox), ...state.inboxes.filter((item) => item.username !== action.inbox.username && item.username !== action.replacing)],
        currentName: action.inbox.username,
        messages: [],
        loaded: false,
        hasMore: false,
      };
    case 'discarded': {
      const inboxes = state.inboxes.filter((inbox) => inbox.username !== action.username);
      if (state.currentName !== action.username) return { ...state, inboxes };
      return { ...state, inboxes, currentName: inboxes[0]?.username ?? null, messages: [], loaded: false, hasMore: false };
    }
    case 'lostAddress':
      return { ...state, inboxes: [], currentName: null, messages: [], loaded: false, phase: 'failed' };
    case 'sessionLost':
      // The page shows its own card for this, with the one-click way back.
      return { ...state, sessionLost: true, notice: null, busy: false };
    case 'live':
      return state.live === action.live ? state : { ...state, live: action.live };
    case 'notice':
      return { ...state, notice: action.notice };
    case 'clearNotice':
      return state.notice?.kind === 'error' && state.notice.text === action.text ? { ...state, notice: null } : state;
    case 'announce':
      return { ...state, announcement: action.text };
    case 'busy':
      return { ...state, busy: action.busy };
  }
}
