import type { CheckResponse, Message } from './api-types.js';
import { isRequestTimeout, TempInboxError, WaitTimeoutError, type WaitFilters } from './errors.js';
import { HELD_REQUEST_SLACK_MS, MIN_HELD_INTERVAL_MS, PAGE_LIMIT, SERVER_MAX_WAIT_SECONDS } from './limits.js';
import { sleep } from './sleep.js';

/** One check request: the query of `GET /api/check/<inbox>` and the options of the attempt. */
export interface CheckQuery extends WaitFilters {
  since?: string;
  before?: string;
  limit?: number;
  wait?: number;
}

/** Reads one check page, retrying 429/503/network errors while `deadline` allows. */
export type CheckPage = (query: CheckQuery, deadline: number, timeoutMs?: number) => Promise<CheckResponse>;

/** Reads every page of a query, newest first: the answer and the older pages behind it. */
export type CheckAll = (query: CheckQuery, deadline: number, first?: CheckResponse) => Promise<Message[]>;

/** Where a handle starts and which messages its waits have returned. */
export interface WaitState {
  /** Messages after this id count; undefined: every message of the inbox. */
  readonly after: string | undefined;
  /** Ids earlier waits returned: never returned again. */
  readonly returned: Set<string>;
}

/** A wait's request. `pick` accepts a message (its result) or passes it over (undefined). */
export interface WaitRequest<T> {
  filters: WaitFilters;
  timeoutMs: number;
  /** "message", "message with a code"…: for the timeout's sentence. */
  what: string;
  pick: (message: Message) => T | undefined;
}

/**
 * The wait every `waitFor…` shares: the OLDEST message after the starting point that matches
 * the filters, passes `pick` and no earlier wait returned.
 *
 * 1. Everything after the starting point that matches is read, every page (the server answers
 *    newest first, at most 100 per page): mail that arrived before the wait was called is
 *    found at once, however much of it there is. This is what a single-window search misses.
 * 2. Nothing fits: the newest message seen becomes the cursor and the server holds a check
 *    with `since=<cursor>&wait=…` until something newer matches. Its answer, read to its last
 *    page, is searched oldest first; nothing fits again: the cursor moves to its newest.
 *
 * A held answer with a message not newer than the cursor means the cursor was deleted (the
 * server then ignores `since`): the wait starts over at 1. Everything is bounded by the
 * deadline; an empty held answer that came early is not asked again for MIN_HELD_INTERVAL_MS.
 */
export async function waitFor<T>(state: WaitState, request: WaitRequest<T>, checkPage: CheckPage, checkAll: CheckAll): Promise<{ result: T; message: Message }> {
  const deadline = Date.now() + request.timeoutMs;
  const filters = pickFilters(request.filters);
  for (;;) {
    // Read even with no time left: a wait with timeout 0 still returns what is already there.
    const history = await untilDeadline(deadline, request, () => checkAll({ ...filters, since: state.after, limit: PAGE_LIMIT }, deadline), false);
    const found = oldestFit(history, state, request);
    if (found !== undefined) return found;
    const known = new Set(history.map((message) => message.id));
    let cursor: Message | undefined = history[0];
    for (;;) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new WaitTimeoutError(request.what, filters, request.timeoutMs);
      const waitSeconds = Math.min(SERVER_MAX_WAIT_SECONDS, Math.max(1, Math.floor(remaining / 1000)));
      const asked = Date.now();
      const page = await untilDeadline(deadline, request, () =>
        checkPage({ ...filters, since: cursor?.id ?? state.after, limit: PAGE_LIMIT, wait: waitSeconds }, deadline, waitSeconds * 1000 + HELD_REQUEST_SLACK_MS),
      );
      if (page.emails.length === 0) {
        const early = MIN_HELD_INTERVAL_MS - (Date.now() - asked);
        if (early > 0 && Date.now() + early < deadline) await sleep(early);
        continue;
      }
      const fresh = await untilDeadline(deadline, request, () => checkAll({ ...filters, since: cursor?.id ?? state.after, limit: PAGE_LIMIT }, deadline, page));
      const sinceIgnored = fresh.some((message) => known.has(message.id) || (cursor !== undefined && message.date < cursor.date));
      if (sinceIgnored) break;
      const fit = oldestFit(fresh, state, request);
      if (fit !== undefined) return fit;
      for (const message of fresh) known.add(message.id);
      cursor = fresh[0] ?? cursor;
    }
  }
}

/** The oldest message of a newest-first list that no wait returned and `pick` takes; marks it returned. */
function oldestFit<T>(newestFirst: Message[], state: WaitState, request: WaitRequest<T>): { result: T; message: Message } | undefined {
  for (let i = newestFirst.length - 1; i >= 0; i -= 1) {
    const message = newestFirst[i];
    if (message === undefined || state.returned.has(message.id)) continue;
    const result = request.pick(message);
    if (result === undefined) continue;
    state.returned.add(message.id);
    return { result, message };
  }
  return undefined;
}

/** Runs one step of a wait; past the deadline an error the step could not retry is the timeout, unless it says more. */
async function untilDeadline<R>(deadline: number, request: WaitRequest<unknown>, step: () => Promise<R>, onlyInTime = true): Promise<R> {
  if (onlyInTime && Date.now() >= deadline) throw new WaitTimeoutError(request.what, pickFilters(request.filters), request.timeoutMs);
  try {
    return await step();
  } catch (error) {
    // A held check cut at the deadline by its own timer is the wait's timeout; an unreachable
    // server or a spent rate limit is reported as what it is.
    if (error instanceof TempInboxError && isRequestTimeout(error) && Date.now() >= deadline) {
      throw new WaitTimeoutError(request.what, pickFilters(request.filters), request.timeoutMs);
    }
    throw error;
  }
}

/** The filters that are set (an empty string filters nothing). */
export function pickFilters(filters: WaitFilters): WaitFilters {
  const out: WaitFilters = {};
  if (filters.to !== undefined && filters.to !== '') out.to = filters.to;
  if (filters.from !== undefined && filters.from !== '') out.from = filters.from;
  if (filters.subject !== undefined && filters.subject !== '') out.subject = filters.subject;
  return out;
}
