import { useCallback, useEffect, useMemo, useReducer, useRef, useState } from 'preact/hooks';
import { api, eventsUrl } from '../api/api-client.js';
import { ApiError } from '../api/api-error.js';
import type { InboxResponse, SessionInbox, SessionResponse } from '@tempinbox/client';
import { errorText } from '../api/error-text.js';
import { followInbox } from './inbox-follower.js';
import { FREE_MODE, inboxReducer, INITIAL_STATE, type InboxState } from './inbox-reducer.js';
import { hadSession, rememberSession, storeCurrent, storedCurrent } from './remembered-session.js';
import { SeenStore } from './seen-store.js';

/** Longest wait before a failed start tries again by itself. */
const MAX_BOOT_RETRY_MS = 10 * 60_000;
/** Wait before a failed start tries again when the server gave no `Retry-After`. */
const BOOT_RETRY_MS = 10_000;

/** Everything the page shows (the reducer's state, with the current inbox looked up). */
export interface TempInboxState extends InboxState {
  current: SessionInbox | null;
  expired: boolean;
}

function summary(inbox: InboxResponse): SessionInbox {
  return { ...inbox, count: 0 };
}

/** When to try again after a failed start: when a rate limit says, else soon (bounded). */
function retryDelayMs(error: unknown): number {
  const wait = error instanceof ApiError && error.retryAfterSeconds !== null ? error.retryAfterSeconds * 1000 : BOOT_RETRY_MS;
  return Math.min(wait, MAX_BOOT_RETRY_MS);
}

function isCode(error: unknown, ...codes: string[]): error is ApiError {
  return error instanceof ApiError && codes.includes(error.code);
}

/**
 * The page's state (web/src/lib/inbox-reducer.ts) and actions over the public API: restore or
 * create the session's inbox, follow it live (inbox-follower.ts), expire it, switch, redeem,
 * create custom names, delete, and start over after the session is lost.
 */
export function useTempInbox() {
  const seen = useMemo(() => new SeenStore(), []);
  const [state, dispatch] = useReducer(inboxReducer, INITIAL_STATE);
  const [, setSeenVersion] = useState(0);
  const bootRetry = useRef<number | undefined>(undefined);

  const current = state.inboxes.find((inbox) => inbox.username === state.currentName) ?? null;
  const expired = current !== null && state.expiredNames.includes(current.username);

  const fail = useCallback((error: unknown) => {
    if (isCode(error, 'session_required')) {
      dispatch({ type: 'sessionLost' });
    } else {
      dispatch({ type: 'notice', notice: { kind: 'error', text: errorText(error) } });
    }
  }, []);

  /** The session's counts and mode from the server, without waiting for them. */
  const refreshSession = useCallback(() => {
    void api.session().then((session) => dispatch({ type: 'session', session }), () => undefined);
  }, []);

  const select = useCallback((username: string) => {
    dispatch({ type: 'select', username });
    storeCurrent(username);
  }, []);

  /**
   * Shows an address as fast as possible. A browser that never had a session (no flag in
   * localStorage) creates one straight away: one request. Otherwise the session's inboxes are
   * loaded first, so a returning premium reader gets their inboxes back rather than a new one.
   * A lost session (401) lands here too, and simply gets a new one.
   */
  const boot = useCallback(async () => {
    window.clearTimeout(bootRetry.current);
    dispatch({ type: 'booting' });
    try {
      let session: SessionResponse | null = null;
      if (hadSession()) {
        try {
          session = await api.session();
        } catch (error) {
          if (!isCode(error, 'session_required')) throw error;
        }
      }
      let list = session?.inboxes ?? [];
      let mode = session === null ? undefined : { premium: session.premium, premiumUntil: session.premium_until, limits: session.limits };
      if (list.length === 0) {
        const inbox = await api.create();
        rememberSession();
        list = [summary(inbox)];
        if (session === null) {
          mode = { ...FREE_MODE, limits: { ...FREE_MODE.limits, ttl: inbox.ttl } };
          // The mode and any other inboxes of a session whose flag was lost, without delaying the address.
          refreshSession();
        }
      }
      const preferred = storedCurrent();
      const chosen = list.find((inbox) => inbox.username === preferred)?.username ?? list[0]?.username ?? '';
      dispatch({ type: 'booted', inboxes: list, current: chosen, mode });
      storeCurrent(chosen);
    } catch (error) {
      dispatch({ type: 'bootFailed', notice: { kind: 'error', text: errorText(error) } });
      // Try again by itself once a rate limit has passed, or soon after a failure.
      bootRetry.current = window.setTimeout(() => void bootRef.current(), retryDelayMs(error));
    }
  }, [refreshSession]);
  const bootRef = useRef(boot);
  bootRef.current = boot;

  /** No address any more (discarded, the next one refused): the failed state, retrying by itself. */
  const lostAddress = useCallback((error: unknown) => {
    dispatch({ type: 'lostAddress' });
    window.clearTimeout(bootRetry.current);
    bootRetry.current = window.setTimeout(() => void bootRef.current(), retryDelayMs(error));
  }, []);

  useEffect(() => {
    void boot();
    return () => window.clearTimeout(bootRetry.current);
  }, [boot]);

  // Live: one follower per shown inbox, stopped when it changes, expires or the session is lost.
  const newestId = useRef<string | undefined>(undefined);
  newestId.current = state.messages[0]?.id;
  const following = state.phase === 'ready' && current !== null && !expired && !state.sessionLost ? current.username : null;
  useEffect(() => {
    if (following === null) return;
    const username = following;
    const networkText = errorText(new ApiError('network', 0));
    return followInbox(
      username,
      { check: api.check, eventsUrl, newestId: () => newestId.current },
      {
        checked: (emails, full, hasMore) => dispatch({ type: 'checked', username, emails, full, hasMore }),
        arrived: (message) => dispatch({ type: 'arrived', username, message }),
        deleted: (id) => dispatch({ type: 'deleted', username, id }),
        expired: () => dispatch({ type: 'expired', username }),
        live: (live) => dispatch({ type: 'live', live }),
        failed: (error) => {
          if (isCode(error, 'inbox_expired', 'inbox_not_found')) dispatch({ type: 'expired', username });
          else fail(error);
        },
        // Clear a "cannot reach the server" notice once the server answers again.
        recovered: () => dispatch({ type: 'clearNotice', text: networkText }),
      },
    );
  }, [following, fail]);

  /** Marks the current inbox expired when its countdown ends (the server agrees at the same instant). */
  const markExpired = useCallback((username: string) => dispatch({ type: 'expired', username }), []);

  /**
   * Runs a user action: busy while it runs; a failure becomes the page notice, or with
   * `inline` is only returned, for a form that shows it beside its field.
   * Resolves to the error sentence, or null on success.
   */
  const run = useCallback(async (action: () => Promise<void>, inline = false): Promise<string | null> => {
    dispatch({ type: 'busy', busy: true });
    dispatch({ type: 'notice', notice: null });
    try {
      await action();
      return null;
    } catch (error) {
      if (!inline || isCode(error, 'session_required')) fail(error);
      return errorText(error);
    } finally {
      dispatch({ type: 'busy', busy: false });
    }
  }, [fail]);

  const addInbox = useCallback((inbox: InboxResponse, replacing?: string) => {
    dispatch({ type: 'added', inbox, replacing });
    storeCurrent(inbox.username);
  }, []);

  /** Free: discard the current inbox and get another. Premium: add a new generated address. */
  const newAddress = useCallback(() => run(async () => {
    const old = current?.username;
    if (!state.mode.premium && old !== undefined) {
      try {
        await api.discardInbox(old);
      } catch (error) {
        if (!isCode(error, 'inbox_not_found')) throw error;
      }
    }
    try {
      addInbox(await api.create(), state.mode.premium ? undefined : old);
    } catch (error) {
      if (!state.mode.premium) lostAddress(error);
      throw error;
    }
  }), [run, current?.username, state.mode.premium, addInbox, lostAddress]);

  /** Discards one inbox (premium switcher, or an expired one); makes a new one when none is left. */
  const discardInbox = useCallback((username: string) => run(async () => {
    try {
      await api.discardInbox(username);
    } catch (error) {
      if (!isCode(error, 'inbox_not_found')) throw error;
    }
    if (state.inboxes.every((inbox) => inbox.username === username)) {
      try {
        addInbox(await api.create(), username);
      } catch (error) {
        lostAddress(error);
        throw error;
      }
    } else {
      dispatch({ type: 'discarded', username });
    }
  }), [run, state.inboxes, addInbox, lostAddress]);

  /** Premium: an address with a chosen name on a chosen domain (or the session's own inbox of that name). */
  const createCustom = useCallback((username: string, domain: string) => run(async () => {
    const inbox = await api.create({ username, domain });
    addInbox(inbox);
    dispatch({ type: 'announce', text: `${inbox.email} is ready.` });
  }, true), [run, addInbox]);

  /** Redeems a license key; on success the session is premium and its inboxes are reloaded. */
  const redeem = useCallback((key: string) => run(async () => {
    await api.redeem(key.trim());
    rememberSession();
    dispatch({ type: 'session', session: await api.session() });
  }, true), [run]);

  const deleteMessage = useCallback((id: string) => run(async () => {
    try {
      await api.deleteMessage(id);
    } catch (error) {
      if (!isCode(error, 'not_found')) throw error;
    }
    if (state.currentName !== null) dispatch({ type: 'deleted', username: state.currentName, id });
    dispatch({ type: 'announce', text: 'Message deleted.' });
  }), [run, state.currentName]);

  /** Loads the whole text of a message the listing cut (`truncated`). */
  const loadFull = useCallback(async (id: string) => {
    try {
      dispatch({ type: 'fullMessage', message: await api.message(id) });
    } catch (error) {
      fail(error);
    }
  }, [fail]);

  const markSeen = useCallback((id: string) => {
    seen.add(id);
    setSeenVersion((version) => version + 1);
  }, [seen]);

  const switchTo = useCallback((username: string) => {
    select(username);
    // The other inboxes' counts as the server has them now (mail arrived while another was shown).
    refreshSession();
  }, [select, refreshSession]);

  const view: TempInboxState = { ...state, current, expired };
  return {
    state: view,
    isSeen: (id: string) => seen.has(id),
    markSeen,
    markExpired,
    select: switchTo,
    newAddress,
    discardInbox,
    createCustom,
    redeem,
    deleteMessage,
    loadFull,
    retry: boot,
    announce: (text: string) => dispatch({ type: 'announce', text }),
    dismissNotice: () => dispatch({ type: 'notice', notice: null }),
  };
}
