import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { AppError } from '../domain/errors.js';
import type { ParsedMail } from '../domain/types.js';
import type { ClosableMailParser, MailParser } from '../ports/mail-parser.js';
import { fallbackOrEmpty, safeReporter, type MailParserOptions } from './inline-mail-parser.js';
import { DEFAULT_MAIL_LIMITS, type MailLimits } from './mail-limits.js';
import { ParseSlots, type ParseSlot } from './parse-slots.js';

/** A message sent to a parse worker. */
export interface ParseRequest {
  raw: Uint8Array;
  context: Parameters<MailParser>[1];
}

/** The worker's answer: the parse and the messages of the errors it recovered from. */
export interface ParseReply {
  parsed: ParsedMail;
  errors: string[];
}

/** Options of createWorkerMailParser. */
export interface WorkerMailParserOptions extends MailParserOptions {
  /** Worker threads at most; default: one per core beyond the main thread's, 1 to 4. */
  threads?: number;
  /** A worker beyond the first exits after this long idle (ms); default PARSE_WORKER_IDLE_MS. */
  idleMs?: number;
  /** A parse that takes longer (ms), from when a worker takes it, is abandoned; default PARSE_DEADLINE_MS. */
  deadlineMs?: number;
  /** Extra workers for parses that turned out slow; default SPARE_PARSE_THREADS. */
  spareThreads?: number;
  /** When a parse counts as slow (ms); default SLOW_PARSE_MS. */
  slowMs?: number;
  /** Longest wait for a worker (ms) before the parse is refused; default MAX_PARSE_WAIT_MS. */
  maxWaitMs?: number;
  /** Parses that may wait for a free worker; default MAX_QUEUED_PARSES. */
  maxQueued?: number;
  /** Raw bytes of the parses in flight; default MAX_QUEUED_PARSE_BYTES. */
  maxQueuedBytes?: number;
  /** Tests only: another worker module (one that can crash on purpose). Production passes none. */
  workerUrl?: URL;
}

/**
 * A parse still running this long after a worker took it is abandoned: its worker is
 * terminated and the message gets the header-only fallback parse (the raw message is stored
 * either way). The input guards bound parsing to about a second for the worst shapes we know;
 * this is the backstop for a shape we do not know, so that no SMTP transaction waits forever.
 * Time spent waiting for a worker does not count: a message queued behind a stuck one is
 * parsed whole.
 */
export const PARSE_DEADLINE_MS = 10_000;

/**
 * A parse still running after this long counts as slow and moves to a spare worker, so the
 * messages behind it start at once. Ordinary mail parses in a few ms and a message at the size
 * limit in 0.1-0.3 s, so only huge or hostile messages pass it, and what they delay the others
 * by is this, not their whole parse.
 */
export const SLOW_PARSE_MS = 200;

/**
 * Workers beyond `threads` for parses that turned out slow: one hostile message (or two)
 * running into the deadline then holds a spare, never the workers everyone else needs. More
 * would only add threads competing for the same cores, and memory (each worker may use
 * PARSE_WORKER_MAX_OLD_GENERATION_MB plus the young generation).
 */
export const SPARE_PARSE_THREADS = 2;

/**
 * Longest wait for a worker before a parse is refused with a temporary error (SMTP 451, the
 * sender retries and the message is parsed whole later). Each running parse ends by
 * PARSE_DEADLINE_MS, so only a sustained flood of slow messages makes a parse wait this long;
 * RFC 5321 §4.5.3.2.6 gives a client 10 minutes for the reply, so it is still waiting.
 */
export const MAX_PARSE_WAIT_MS = 30_000;

/**
 * A worker beyond the first exits after this long idle, so that an idle service holds one
 * thread; starting one again costs a few tens of ms, paid only after a quiet spell.
 */
export const PARSE_WORKER_IDLE_MS = 10_000;

/**
 * Parses in flight (running or waiting for a free worker) before new ones are refused: one per
 * SMTP connection the listener admits (MAX_CLIENTS, 1,000) and as many again, so a burst of
 * small messages from every open connection waits its turn instead of meeting a 451 (64, the
 * first bound, refused the benchmark's 500 simultaneous 4 KB deliveries). What really bounds
 * the queue is MAX_QUEUED_PARSE_BYTES. Past either the delivery fails with a temporary 451
 * (docs/api.md, "Decisions where the contract is silent").
 */
export const MAX_QUEUED_PARSES = 2_000;

/**
 * Raw bytes of the messages in flight to the workers. Each waiting message is held in memory
 * and a parse at the size limit (MAX_MESSAGE_BYTES, 10 MiB) takes ~0.1-0.3 s on one core:
 * 256 MiB is ~25 such messages, several seconds of work (deeper would mostly meet
 * PARSE_DEADLINE_MS anyway), while typical mail (a few KB) never comes close.
 */
export const MAX_QUEUED_PARSE_BYTES = 256 * 1024 * 1024;

/**
 * V8 heap of one worker (old generation). Measured on 10 MiB messages (MAX_MESSAGE_BYTES):
 * a base64 attachment or long text parses within 64 MiB, an HTML body at the size limit (the
 * worst we know: postal-mime's strings plus the sanitiser's tree) needs between 64 and 128.
 * 256 leaves twice that for shapes we do not know, and keeps the worst case of all workers
 * at once (threads plus SPARE_PARSE_THREADS: 3 on two cores, 6 at most) between 1 and 2 GiB;
 * past it the worker dies with ERR_WORKER_OUT_OF_MEMORY and only its message falls back,
 * instead of the whole process growing until the kernel kills it.
 */
export const PARSE_WORKER_MAX_OLD_GENERATION_MB = 256;

/**
 * Young generation of one worker. A parse allocates many short-lived strings and chunks
 * (each 10 MiB input is decoded and split more than once); 64 MiB keeps those in cheap
 * scavenges instead of promoting them, and is counted on top of the old generation.
 */
export const PARSE_WORKER_MAX_YOUNG_GENERATION_MB = 64;

/**
 * Stack of one worker. The MIME tree is bounded (maxNestingDepth 50, rfc822 depth 5) and the
 * HTML nesting guard caps element depth; Node's default 4 MiB covers both with a wide margin,
 * and a deeper recursion ends as a RangeError inside the worker, not a crash of the process.
 */
export const PARSE_WORKER_STACK_MB = 4;

/** The function of the worker module that the pool calls (parse-worker.ts). */
const WORKER_EXPORT = 'parseInWorker';

/**
 * Where the worker's code is: the compiled .js next to this file; under tsx or vitest
 * (running the .ts sources) the .ts file, loaded through tsx.
 */
function workerEntry(override: URL | undefined): { url: URL; execArgv: string[] } {
  const fromSource = import.meta.url.endsWith('.ts');
  const url = override ?? new URL(fromSource ? './parse-worker.ts' : './parse-worker.js', import.meta.url);
  return { url, execArgv: url.pathname.endsWith('.ts') ? ['--import', 'tsx'] : [] };
}

/** Why a worker gave no parse: its own words when it had any (out of memory, exit code). */
function describeFailure(error: unknown, deadlineMs: number): string {
  if (error instanceof Error && error.name === 'AbortError') return `MIME parse took over ${deadlineMs} ms`;
  return `MIME parse worker failed (${error instanceof Error ? error.message : String(error)})`;
}

/**
 * A MailParser that parses in a pool of worker threads (piscina): MIME parsing is CPU work
 * linear in the message size, and on the event loop it would delay every SMTP reply and HTTP
 * request meanwhile. Each worker has resource limits; a message that crashes its worker,
 * exhausts its memory or passes the deadline gets the header-only fallback parse (never a
 * second full parse on this thread), and the other messages go on in a fresh worker. Which
 * parse runs when is ParseSlots' business: a deadline counts from when a worker takes the
 * message, and a slow parse moves aside to a spare worker, so that one message never delays
 * or degrades another's parse. Past maxQueued waiting parses, or after waiting maxWaitMs for
 * a worker, it rejects with AppError('unavailable') (SMTP 451, the sender retries); otherwise
 * it never rejects. close() terminates the workers.
 */
export function createWorkerMailParser(options: WorkerMailParserOptions = {}): ClosableMailParser {
  const limits: MailLimits = { ...DEFAULT_MAIL_LIMITS, ...options.limits };
  const maxThreads = options.threads ?? Math.max(1, Math.min(4, availableParallelism() - 1));
  const deadlineMs = options.deadlineMs ?? PARSE_DEADLINE_MS;
  const maxQueued = options.maxQueued ?? MAX_QUEUED_PARSES;
  const maxQueuedBytes = options.maxQueuedBytes ?? MAX_QUEUED_PARSE_BYTES;
  const spareThreads = options.spareThreads ?? SPARE_PARSE_THREADS;
  const slots = new ParseSlots({
    threads: maxThreads,
    spares: spareThreads,
    slowMs: options.slowMs ?? SLOW_PARSE_MS,
    maxWaitMs: options.maxWaitMs ?? MAX_PARSE_WAIT_MS,
  });
  const report = safeReporter(options.onParseError);
  const { url, execArgv } = workerEntry(options.workerUrl);
  const startPool = (): Piscina<ParseRequest, ParseReply> => {
    const started = new Piscina<ParseRequest, ParseReply>({
      filename: url.href,
      // The worker module's named export (WORKER_EXPORT) that parses one message.
      name: WORKER_EXPORT,
      execArgv,
      workerData: { limits },
      // piscina replaces a crashed or aborted worker only up to minThreads, and hands the
      // queue to a worker only when one becomes ready: with 0, the messages queued behind a
      // poison message would wait for the deadline. One idle (unref'd) thread is the price.
      minThreads: 1,
      // ParseSlots starts at most this many parses at once, so each finds a worker at once.
      maxThreads: maxThreads + spareThreads,
      idleTimeout: options.idleMs ?? PARSE_WORKER_IDLE_MS,
      // One message per worker at a time: a crash or an abort then concerns that message only.
      concurrentTasksPerWorker: 1,
      // The worker awaits postal-mime's streams: its event loop must run, not sleep in Atomics.wait.
      atomics: 'disabled',
      // No run-time and wait-time histograms: nothing reads them, and they cost every task two
      // clock reads and two histogram records.
      recordTiming: false,
      resourceLimits: {
        maxOldGenerationSizeMb: PARSE_WORKER_MAX_OLD_GENERATION_MB,
        maxYoungGenerationSizeMb: PARSE_WORKER_MAX_YOUNG_GENERATION_MB,
        stackSizeMb: PARSE_WORKER_STACK_MB,
      },
    });
    // A worker failing with no task of ours in it (e.g. while idle): nothing is owed to anyone.
    started.on('error', (error: unknown) => report(error));
    return started;
  };
  // Started on the first message, so that an app that never receives mail starts no thread.
  let pool: Piscina<ParseRequest, ParseReply> | undefined;
  // Counted here rather than with piscina's maxQueue, which does not count tasks given an
  // AbortSignal (every one of ours).
  let inFlight = 0;
  let inFlightBytes = 0;
  let closed = false;

  const parse = async (raw: Uint8Array, context: ParseRequest['context']): Promise<ParsedMail> => {
    // One message alone may always go (inFlight 0), however large: MAX_MESSAGE_BYTES bounds it.
    const overBytes = inFlight > 0 && inFlightBytes + raw.byteLength > maxQueuedBytes;
    if (closed || inFlight >= maxThreads + maxQueued || overBytes) {
      throw new AppError('unavailable', closed ? 'The mail parser is shut down.' : 'Too many messages are waiting to be parsed.');
    }
    inFlight += 1;
    inFlightBytes += raw.byteLength;
    let slot: ParseSlot | undefined;
    try {
      // Rejects with `unavailable` (451) after close() or a long wait: not parsed, not stored.
      slot = await slots.acquire();
      return await parseInPool(raw, context);
    } finally {
      slot?.release();
      inFlight -= 1;
      inFlightBytes -= raw.byteLength;
    }
  };

  /** One parse in a worker, its deadline counted from now; never rejects. */
  const parseInPool = async (raw: Uint8Array, context: ParseRequest['context']): Promise<ParsedMail> => {
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), deadlineMs);
    try {
      const reply = await (pool ??= startPool()).run({ raw, context }, { signal: deadline.signal });
      for (const message of reply.errors) report(new Error(message));
      return reply.parsed;
    } catch (error) {
      // The worker crashed, ran out of memory or passed the deadline (piscina then terminated
      // it). The message is not parsed again on this thread: it may be what killed the worker.
      report(new Error(`${describeFailure(error, deadlineMs)}; stored the header-only fallback parse`, { cause: error }));
      return fallbackOrEmpty(raw, limits, report);
    } finally {
      clearTimeout(timer);
    }
  };

  return Object.assign(parse, {
    async close(): Promise<void> {
      closed = true;
      slots.close();
      await pool?.destroy();
    },
  });
}
