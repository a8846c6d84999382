import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api } from '../api/api-client.js';
import { ApiError } from '../api/api-error.js';
import type { Inbox, InboxSummary, Limits, Message, SessionInfo } from '../api/api-types.js';
import { errorText } from '../api/error-text.js';
import { mergeMessages } from './merge-messages.js';
import { hadSession, rememberSession, storeCurrent, storedCurrent } from './remembered-session.js';
import { SeenStore } from './seen-store.js';

/** Poll period while the tab is visible: new mail shows within a few seconds. */
const POLL_VISIBLE_MS = 3000;
/** Poll period in a background tab: still current on return, at a fifth of the requests. */
const POLL_HIDDEN_MS = 15_000;
/** Longest wait between retries after network or database failures. */
const MAX_BACKOFF_MS = 30_000;
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

/** Everything the page shows, in one place. */
export interface TempInboxState {
  phase: 'loading' | 'ready' | 'failed';
  mode: SessionMode;
  inboxes: InboxSummary[];
  current: InboxSummary | null;
  messages: Message[];
  /** Whether the first check of the current inbox has answered (empty state vs. loading). */
  loaded: boolean;
  expired: boolean;
  notice: Notice | null;
  /** Text for the polite live region: new mail, copy confirmations. */
  announcement: string;
  busy: boolean;
}

const FREE_MODE: SessionMode = { premium: false, premiumUntil: null, limits: { max_inboxes: 1, ttl: 1800, custom_usernames: false } };

function summary(inbox: Inbox): InboxSummary {
  return { ...inbox, count: 0 };
}

/** When to try again after a failed start: when a rate limit says, else soon (at most 10 minutes). */
function retryDelayMs(error: unknown): number {
  const wait = error instanceof ApiError && error.retryAfterSeconds !== null ? error.retryAfterSeconds * 1000 : 10_000;
  return Math.min(wait, 10 * 60_000);
}

function isCode(error: unknown, ...codes: string[]): error is ApiError {
  return error instanceof ApiError && codes.includes(error.code);
}

/**
 * The page's state and actions over the public API: restore or create the session's inbox,
 * poll it with `since`, expire it, switch, redeem, create custom names, delete.
 */
export function useTempInbox() {
  const seen = useMemo(() => new SeenStore(), []);
  const [phase, setPhase] = useState<TempInboxState['phase']>('loading');
  const [mode, setMode] = useState<SessionMode>(FREE_MODE);
  const [inboxes, setInboxes] = useState<InboxSummary[]>([]);
  const [currentName, setCurrentName] = useState<string | null>(null);
  const [messages, setMessages] = useState<Message[]>([]);
  const [loaded, setLoaded] = useState(false);
  const [expiredNames, setExpiredNames] = useState<ReadonlySet<string>>(new Set());
  const [notice, setNotice] = useState<Notice | null>(null);
  const [announcement, setAnnouncement] = useState('');
  const [busy, setBusy] = useState(false);
  const [, setSeenVersion] = useState(0);
  const bootRetry = useRef<number | undefined>(undefined);

  const current = inboxes.find((inbox) => inbox.username === currentName) ?? null;
  const expired = current !== null && expiredNames.has(current.username);

  const select = useCallback((username: string) => {
    setCurrentName(username);
    setMessages([]);
    setLoaded(false);
    storeCurrent(username);
  }, []);

  /** Takes mode, limits and inboxes from `GET /api/session`. */
  const applySession = useCallback((session: SessionInfo) => {
    setMode({ premium: session.premium, premiumUntil: session.premium_until, limits: session.limits });
    if (session.inboxes.length > 0) setInboxes(session.inboxes);
  }, []);

  const fail = useCallback((error: unknown) => {
    setNotice({ kind: 'error', text: errorText(error) });
  }, []);

  /**
   * Shows an address as fast as possible. A browser that never had a session (no flag in
   * localStorage) creates one straight away: one request. Otherwise the session's inboxes are
   * loaded first, so a returning premium reader gets their inboxes back rather than a new one.
   */
  const boot = useCallback(async () => {
    window.clearTimeout(bootRetry.current);
    setPhase('loading');
    try {
      let session: SessionInfo | null = null;
      if (hadSession()) {
        try {
          session = await api.session();
        } catch (error) {
          if (!isCode(error, 'session_required')) throw error;
        }
      }
      let list = session?.inboxes ?? [];
      if (list.length === 0) {
        const inbox = await api.create();
        rememberSession();
        list = [summary(inbox)];
        if (session === null) {
          setMode({ ...FREE_MODE, limits: { ...FREE_MODE.limits, ttl: inbox.ttl } });
          // The mode and any other inboxes of a session whose flag was lost, without delaying the address.
          void api.session().then(applySession, () => undefined);
        }
      }
      if (session !== null) applySession(session);
      setInboxes(list);
      const preferred = storedCurrent();
      select(list.find((inbox) => inbox.username === preferred)?.username ?? list[0]?.username ?? '');
      setNotice(null);
      setPhase('ready');
    } catch (error) {
      fail(error);
      setPhase('failed');
      // Try again by itself once a rate limit has passed, or soon after a failure.
      bootRetry.current = window.setTimeout(() => void bootRef.current(), retryDelayMs(error));
    }
  }, [fail, select, applySession]);
  const bootRef = useRef(boot);
  bootRef.current = boot;

  /** No address any more (discarded, the next one refused): the failed state, retrying by itself. */
  const lostAddress = useCallback((error: unknown) => {
    setInboxes([]);
    setCurrentName(null);
    setPhase('failed');
    window.clearTimeout(bootRetry.current);
    bootRetry.current = window.setTimeout(() => void bootRef.current(), retryDelayMs(error));
  }, []);

  useEffect(() => {
    void boot();
    return () => window.clearTimeout(bootRetry.current);
  }, [boot]);

  // Polling: one loop per current inbox, stopped when it changes or expires.
  const newestId = useRef<string | undefined>(undefined);
  newestId.current = messages[0]?.id;
  useEffect(() => {
    if (phase !== 'ready' || current === null || expired) return;
    const username = current.username;
    let stopped = false;
    let timer: number | undefined;
    let backoff = POLL_VISIBLE_MS;
    // The first answer is what the inbox already held: nothing to announce.
    let firstAnswer = true;
    const poll = async () => {
      let wait = document.hidden ? POLL_HIDDEN_MS : POLL_VISIBLE_MS;
      try {
        const result = await api.check(username, newestId.current);
        if (stopped) return;
        backoff = POLL_VISIBLE_MS;
        setLoaded(true);
        if (result.emails.length > 0) {
          setMessages((known) => mergeMessages(known, result.emails));
          setInboxes((list) => list.map((inbox) => (inbox.username === username ? { ...inbox, count: inbox.count + result.emails.length } : inbox)));
          const first = result.emails[0];
          if (!firstAnswer && first !== undefined) {
            setAnnouncement(result.emails.length === 1 ? `New message from ${first.from}: ${first.subject || '(no subject)'}` : `${result.emails.length} new messages`);
          }
        }
        firstAnswer = false;
        setNotice((shown) => (shown?.kind === 'error' && shown.text === errorText(new ApiError('network', 0)) ? null : shown));
      } catch (error) {
        if (stopped) return;
        if (isCode(error, 'inbox_expired', 'inbox_not_found')) {
          setExpiredNames((names) => new Set(names).add(username));
          return;
        }
        if (isCode(error, 'session_required')) {
          fail(error);
          return;
        }
        fail(error);
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
        wait = error instanceof ApiError && error.retryAfterSeconds !== null ? error.retryAfterSeconds * 1000 : backoff;
      }
      if (!stopped) timer = window.setTimeout(() => void poll(), wait);
    };
    void poll();
    // Back to a visible tab: look at once instead of waiting out the background period.
    const onVisible = () => {
      if (document.hidden || stopped) return;
      window.clearTimeout(timer);
      void poll();
    };
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      stopped = true;
      window.clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, [phase, current?.username, expired, fail]);

  /** Marks the current inbox expired when its countdown ends (the server agrees at the same instant). */
  const markExpired = useCallback((username: string) => {
    setExpiredNames((names) => new Set(names).add(username));
  }, []);

  /**
   * Runs a user action: busy while it runs; a failure becomes the page notice, or with
   * `inline` is only returned, for a form that shows it beside its field.
   * Resolves to the error sentence, or null on success.
   */
  const run = useCallback(async (action: () => Promise<void>, inline = false): Promise<string | null> => {
    setBusy(true);
    setNotice(null);
    try {
      await action();
      return null;
    } catch (error) {
      if (!inline) fail(error);
      return errorText(error);
    } finally {
      setBusy(false);
    }
  }, [fail]);

  const addInbox = useCallback((inbox: Inbox, replacing?: string) => {
    setInboxes((list) => [summary(inbox), ...list.filter((item) => item.username !== inbox.username && item.username !== replacing)]);
    select(inbox.username);
  }, [select]);

  /** Free: discard the current inbox and get another. Premium: add a new generated address. */
  const newAddress = useCallback(() => run(async () => {
    const old = current?.username;
    if (!mode.premium && old !== undefined) {
      try {
        await api.discardInbox(old);
      } catch (error) {
        if (!isCode(error, 'inbox_not_found')) throw error;
      }
    }
    try {
      addInbox(await api.create(), mode.premium ? undefined : old);
    } catch (error) {
      if (!mode.premium) lostAddress(error);
      throw error;
    }
  }), [run, current?.username, mode.premium, addInbox, lostAddress]);

  /** Discards one inbox (premium switcher, or an expired one); makes a new one when none is left. */
  const discardInbox = useCallback((username: string) => run(async () => {
    try {
      await api.discardInbox(username);
    } catch (error) {
      if (!isCode(error, 'inbox_not_found')) throw error;
    }
    const rest = inboxes.filter((inbox) => inbox.username !== username);
    if (rest.length === 0) {
      try {
        addInbox(await api.create(), username);
      } catch (error) {
        lostAddress(error);
        throw error;
      }
    } else {
      setInboxes(rest);
      if (currentName === username && rest[0] !== undefined) select(rest[0].username);
    }
  }), [run, inboxes, currentName, addInbox, select, lostAddress]);

  /** Premium: an address with a chosen name on a chosen domain (or the session's own inbox of that name). */
  const createCustom = useCallback((username: string, domain: string) => run(async () => {
    const inbox = await api.create({ username, domain });
    addInbox(inbox);
    setAnnouncement(`${inbox.email} is ready.`);
  }, true), [run, addInbox]);

  /** Redeems a license key; on success the session is premium and its inboxes are reloaded. */
  const redeem = useCallback((key: string) => run(async () => {
    await api.redeem(key.trim());
    rememberSession();
    applySession(await api.session());
  }, true), [run, applySession]);

  const deleteMessage = useCallback((id: string) => run(async () => {
    try {
      await api.deleteMessage(id);
    } catch (error) {
      if (!isCode(error, 'not_found')) throw error;
    }
    setMessages((list) => list.filter((message) => message.id !== id));
    setInboxes((list) => list.map((inbox) => (inbox.username === currentName ? { ...inbox, count: Math.max(0, inbox.count - 1) } : inbox)));
    setAnnouncement('Message deleted.');
  }), [run, currentName]);

  const markSeen = useCallback((id: string) => {
    seen.add(id);
    setSeenVersion((version) => version + 1);
  }, [seen]);

  const state: TempInboxState = { phase, mode, inboxes, current, messages, loaded, expired, notice, announcement, busy };
  return {
    state,
    isSeen: (id: string) => seen.has(id),
    markSeen,
    markExpired,
    select,
    newAddress,
    discardInbox,
    createCustom,
    redeem,
    deleteMessage,
    retry: boot,
    announce: setAnnouncement,
    dismissNotice: () => setNotice(null),
  };
}
