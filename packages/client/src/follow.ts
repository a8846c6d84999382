import type { CheckResponse, Message } from './api-types.js';
import { TempInboxError } from './errors.js';
import { BACKOFF_MAX_MS, BACKOFF_START_MS, FOLLOW_SEEN_IDS, MAX_STREAM_RECONNECTS, STREAM_IDLE_TIMEOUT_MS } from './limits.js';
import { EventStreamParser } from './event-stream-parser.js';
import { sleep } from './sleep.js';
import type { Transport } from './transport.js';
import type { CheckQuery } from './wait-for.js';

/** Options of `inbox.follow()`. */
export interface FollowOptions {
  /** Ends the iteration (without an error) when it aborts. */
  signal?: AbortSignal;
}

/**
 * A message id that names no message (the ids are 128 random bits). The server replays an
 * unknown `Last-Event-ID` from the inbox's oldest message (docs/api.md, decision 47): that is
 * how a stream on an inbox that was empty when `follow` began gets, after a reconnect, what
 * arrived while it was away.
 */
const FROM_THE_START = 'AAAAAAAAAAAAAAAAAAAAAA';

/** A connection that lived this long, or brought a message, was healthy: the reconnect count starts over. */
const HEALTHY_CONNECTION_MS = 5_000;

/**
 * The inbox's event stream as an async iterator of messages: those that arrive after it has
 * connected, in order. A dropped connection is resumed with `Last-Event-ID` (the server then
 * sends what it missed first) and a message is never yielded twice. It ends on the stream's
 * `expired` event, when `signal` aborts, or when the consumer stops iterating.
 */
export async function* follow(
  transport: Transport,
  path: string,
  check: (query: CheckQuery) => Promise<CheckResponse>,
  options: FollowOptions,
): AsyncGenerator<Message, void, undefined> {
  const outer = options.signal;
  const seen = new Set<string>();
  // The newest message now is where the stream starts, so that a connection dropped before the
  // first live message still resumes from a known point.
  let resumeAfter = (await check({ limit: 1 })).emails[0]?.id;
  const startedEmpty = resumeAfter === undefined;
  let connections = 0;
  let failures = 0;
  for (;;) {
    if (isAborted(outer)) return;
    const lastId = resumeAfter ?? (startedEmpty && connections > 0 ? FROM_THE_START : undefined);
    const idle = new AbortController();
    const signal = outer === undefined ? idle.signal : AbortSignal.any([outer, idle.signal]);
    let response: Response;
    try {
      response = await transport.open(path, { accept: 'text/event-stream', headers: lastId === undefined ? {} : { 'last-event-id': lastId }, signal });
    } catch (error) {
      if (isAborted(outer)) return;
      if (error instanceof TempInboxError && error.code === 'inbox_expired') return;
      failures += 1;
      if (!retryable(error) || failures > MAX_STREAM_RECONNECTS) throw error;
      if (!(await pause(reconnectDelay(error, failures), outer))) return;
      continue;
    }
    connections += 1;
    const opened = Date.now();
    let brought = false;
    const body = response.body;
    if (body === null) throw new TempInboxError(response.status, 'invalid_response', 'The event stream has no body.');
    const reader = body.getReader();
    const decoder = new TextDecoder();
    const parser = new EventStreamParser();
    let timer = setTimeout(() => idle.abort(), STREAM_IDLE_TIMEOUT_MS);
    try {
      for (;;) {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch {
          break; // dropped, or idle past STREAM_IDLE_TIMEOUT_MS: reconnect
        }
        if (chunk.done) break;
        clearTimeout(timer);
        timer = setTimeout(() => idle.abort(), STREAM_IDLE_TIMEOUT_MS);
        for (const event of parser.push(decoder.decode(chunk.value, { stream: true }))) {
          if (event.event === 'expired') return;
          if (event.event !== 'message') continue;
          const message = parseMessage(event.data);
          resumeAfter = event.id ?? message.id;
          brought = true;
          if (seen.has(message.id)) continue;
          remember(seen, message.id);
          yield message;
        }
      }
    } finally {
      clearTimeout(timer);
      idle.abort();
      void reader.cancel().catch(() => undefined);
    }
    if (isAborted(outer)) return;
    failures = brought || Date.now() - opened >= HEALTHY_CONNECTION_MS ? 0 : failures + 1;
    if (failures > MAX_STREAM_RECONNECTS) throw new TempInboxError(0, 'network_error', `The event stream closed ${failures} times in a row without bringing anything.`);
    if (!(await pause(Math.min(BACKOFF_START_MS * 2 ** failures, BACKOFF_MAX_MS), outer))) return;
  }
}

/** A function, not an inline test: TypeScript would keep the narrowing of an earlier check across awaits. */
function isAborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true;
}

function retryable(error: unknown): error is TempInboxError {
  return error instanceof TempInboxError && (error.status === 429 || error.status === 503 || error.code === 'network_error');
}

function reconnectDelay(error: TempInboxError, failures: number): number {
  return error.retryAfter !== undefined ? error.retryAfter * 1000 : Math.min(BACKOFF_START_MS * 2 ** (failures - 1), BACKOFF_MAX_MS);
}

/** Sleeps; false when the signal aborted meanwhile (the iteration then ends). */
async function pause(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  try {
    await sleep(ms, signal);
    return true;
  } catch {
    return false;
  }
}

function parseMessage(data: string): Message {
  try {
    return JSON.parse(data) as Message;
  } catch {
    throw new TempInboxError(0, 'invalid_response', 'An event of the stream is not a message.');
  }
}

/** Adds an id, forgetting the oldest past FOLLOW_SEEN_IDS (a Set iterates in insertion order). */
function remember(seen: Set<string>, id: string): void {
  seen.add(id);
  if (seen.size > FOLLOW_SEEN_IDS) {
    const oldest = seen.values().next().value;
    if (oldest !== undefined) seen.delete(oldest);
  }
}
