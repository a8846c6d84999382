import { ApiError } from '../api/api-error.js';
import type { CheckResponse, Message } from '@tempinbox/client';
import type { LiveMode } from './inbox-reducer.js';

/** Poll period while the tab is visible and the stream is down: new mail within a few seconds. */
export const POLL_VISIBLE_MS = 3000;
/** Poll period in a background tab: still current on return, at a fifth of the requests. */
export const POLL_HIDDEN_MS = 15_000;
/** Longest wait between polls after network or database failures. */
const MAX_BACKOFF_MS = 30_000;
/** First wait before reopening a stream that worked and then closed (server restart, proxy cut). */
const STREAM_RETRY_MIN_MS = 30_000;
/**
 * Longest wait before trying the stream again; also the wait after a stream that never opened
 * (an older server answers 404): one extra request per 5 minutes beside the polls.
 */
const STREAM_RETRY_MAX_MS = 5 * 60_000;

/** What the follower reports; the hook turns each into a reducer action. */
export interface FollowerEvents {
  checked: (emails: Message[], full: boolean, hasMore: boolean) => void;
  arrived: (message: Message) => void;
  deleted: (id: string) => void;
  expired: () => void;
  live: (mode: LiveMode) => void;
  /** A check failed; `final` when following has stopped (session gone, inbox expired or gone). */
  failed: (error: unknown, final: boolean) => void;
  /** A check answered after one failed before. */
  recovered: () => void;
}

/** What the follower needs from outside: the API and the newest message shown. */
export interface FollowerDeps {
  check: (username: string, since?: string) => Promise<CheckResponse>;
  /** The event stream's address (`?since=` the newest message shown, when there is one). */
  eventsUrl: (username: string, since?: string) => string;
  newestId: () => string | undefined;
}

/** Errors after which polling again cannot help: the caller starts over or shows expiry. */
const FINAL_CODES = ['session_required', 'inbox_expired', 'inbox_not_found'];

function parse<T>(data: unknown): T | null {
  try {
    return typeof data === 'string' ? (JSON.parse(data) as T) : null;
  } catch {
    return null;
  }
}

/**
 * Follows one inbox: a first full check, then the event stream (`GET /api/inbox/<name>/events`),
 * with polling by `since` while the stream is down or missing (docs/web.md "Live mail").
 * At most one check is in flight at a time; a check asked for meanwhile runs once after it.
 * Returns the function that stops everything.
 */
export function followInbox(username: string, deps: FollowerDeps, events: FollowerEvents): () => void {
  let stopped = false;
  let loaded = false;
  let inFlight = false;
  let again = false;
  let failing = false;
  let pollTimer: number | undefined;
  let streamTimer: number | undefined;
  let backoff = POLL_VISIBLE_MS;
  let streamRetry = STREAM_RETRY_MIN_MS;
  let source: EventSource | null = null;
  let streamOpen = false;
  let streamEverOpened = false;

  const stop = () => {
    stopped = true;
    window.clearTimeout(pollTimer);
    window.clearTimeout(streamTimer);
    source?.close();
    source = null;
    document.removeEventListener('visibilitychange', onVisible);
  };

  /** Next poll, only while the stream is not delivering (never both at full rate). */
  const schedulePoll = (wait: number) => {
    window.clearTimeout(pollTimer);
    if (!stopped && !streamOpen) pollTimer = window.setTimeout(() => void check(), wait);
  };

  const check = async (): Promise<void> => {
    if (stopped) return;
    if (inFlight) {
      again = true;
      return;
    }
    inFlight = true;
    window.clearTimeout(pollTimer);
    let wait = document.hidden ? POLL_HIDDEN_MS : POLL_VISIBLE_MS;
    try {
      const full = !loaded;
      const result = await deps.check(username, full ? undefined : deps.newestId());
      if (stopped) return;
      loaded = true;
      backoff = POLL_VISIBLE_MS;
      events.checked(result.emails, full, result.has_more === true);
      if (failing) events.recovered();
      failing = false;
      if (full) openStream(result.emails[0]?.id);
    } catch (error) {
      if (stopped) return;
      const final = error instanceof ApiError && FINAL_CODES.includes(error.code);
      events.failed(error, final);
      if (final) {
        stop();
        return;
      }
      failing = true;
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      wait = error instanceof ApiError && error.retryAfterSeconds !== null ? error.retryAfterSeconds * 1000 : backoff;
    } finally {
      inFlight = false;
    }
    if (again) {
      again = false;
      void check();
    } else {
      schedulePoll(wait);
    }
  };

  const openStream = (since: string | undefined) => {
    if (stopped || source !== null || typeof EventSource === 'undefined') return;
    const stream = new EventSource(deps.eventsUrl(username, since));
    source = stream;
    stream.addEventListener('open', () => {
      streamOpen = true;
      streamEverOpened = true;
      streamRetry = STREAM_RETRY_MIN_MS;
      events.live('stream');
      // Anything that arrived between the last answer and this (re)connection.
      void check();
    });
    stream.addEventListener('message', (event) => {
      const message = parse<Message>(event.data);
      if (message !== null && typeof message.id === 'string') events.arrived(message);
    });
    stream.addEventListener('deleted', (event) => {
      const id = parse<{ id?: unknown }>((event as MessageEvent).data)?.id;
      if (typeof id === 'string') events.deleted(id);
    });
    stream.addEventListener('expired', () => {
      events.expired();
      stop();
    });
    stream.addEventListener('error', () => {
      if (stopped) return;
      streamOpen = false;
      events.live('polling');
      if (stream.readyState === EventSource.CLOSED) {
        // Refused (404 on an older server, 401, 429…): poll, and try the stream again later.
        source = null;
        const delay = streamEverOpened ? streamRetry : STREAM_RETRY_MAX_MS;
        streamRetry = Math.min(streamRetry * 2, STREAM_RETRY_MAX_MS);
        window.clearTimeout(streamTimer);
        streamTimer = window.setTimeout(() => openStream(deps.newestId()), delay);
      }
      // CONNECTING: the browser reconnects by itself with Last-Event-ID; poll meanwhile.
      if (!inFlight) schedulePoll(document.hidden ? POLL_HIDDEN_MS : POLL_VISIBLE_MS);
    });
  };

  // Back to a visible tab while polling: look at once instead of waiting out the background period.
  function onVisible() {
    if (!document.hidden && !stopped && !streamOpen && !failing) void check();
  }
  document.addEventListener('visibilitychange', onVisible);
  void check();
  return stop;
}
