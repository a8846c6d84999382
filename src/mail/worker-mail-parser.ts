import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { ParsedMail } from '../domain/types.js';
import type { MailParser } from '../ports/mail-parser.js';
import { createInlineMailParser, fallbackOrEmpty, safeReporter, type MailParserOptions } from './inline-mail-parser.js';
import { DEFAULT_MAIL_LIMITS, type MailLimits } from './mail-limits.js';

/** A message sent to a parse worker. */
export interface ParseRequest {
  id: number;
  raw: Uint8Array;
  context: Parameters<MailParser>[1];
}

/** The worker's answer: the parse and the messages of the errors it recovered from. */
export interface ParseReply {
  id: number;
  parsed: ParsedMail;
  errors: string[];
}

/** Options of createWorkerMailParser. */
export interface WorkerMailParserOptions extends MailParserOptions {
  /** Worker threads at most; default: one per core beyond the main thread's, 1 to 4. */
  threads?: number;
  /** An idle worker exits after this long (ms); default PARSE_WORKER_IDLE_MS. */
  idleMs?: number;
  /** A parse that takes longer (ms) is abandoned; default PARSE_DEADLINE_MS. */
  deadlineMs?: number;
}

/**
 * A parse still running after this long is abandoned: its worker is terminated and the
 * message gets the header-only fallback parse (the raw message is stored either way). The
 * input guards bound parsing to about a second for the worst shapes we know; this is the
 * backstop for a shape we do not know, so that no SMTP transaction waits forever.
 */
export const PARSE_DEADLINE_MS = 10_000;

/**
 * An idle worker exits after this long, so that an idle service (or a test's app that is
 * never stopped through the parser) holds no threads; starting one again costs a few tens
 * of ms, paid only after a quiet spell.
 */
export const PARSE_WORKER_IDLE_MS = 10_000;

/** One worker thread and the parses it owes. */
interface ParseThread {
  worker: Worker;
  pending: Map<number, { raw: Uint8Array; context: ParseRequest['context']; resolve: (parsed: ParsedMail) => void }>;
  idle: NodeJS.Timeout | undefined;
}

/**
 * Where the worker's code is: the compiled .js next to this file; under tsx or vitest
 * (running the .ts sources) the .ts file, loaded through tsx.
 */
function workerEntry(): { url: URL; execArgv: string[] } {
  const fromSource = import.meta.url.endsWith('.ts');
  return {
    url: new URL(fromSource ? './parse-worker.ts' : './parse-worker.js', import.meta.url),
    execArgv: fromSource ? ['--import', 'tsx'] : [],
  };
}

/**
 * A MailParser that parses in worker threads: MIME parsing is CPU work linear in the message
 * size (milliseconds for a large message), and on the event loop it delays every SMTP reply
 * and HTTP request meanwhile. Same results as createInlineMailParser (the workers run it);
 * if a worker fails, its pending messages are parsed on the calling thread instead, so the
 * parser still never rejects.
 */
export function createWorkerMailParser(options: WorkerMailParserOptions = {}): MailParser {
  const limits: MailLimits = { ...DEFAULT_MAIL_LIMITS, ...options.limits };
  const maxThreads = options.threads ?? Math.max(1, Math.min(4, availableParallelism() - 1));
  const idleMs = options.idleMs ?? PARSE_WORKER_IDLE_MS;
  const deadlineMs = options.deadlineMs ?? PARSE_DEADLINE_MS;
  const inline = createInlineMailParser(options);
  const threads = new Set<ParseThread>();
  let nextId = 0;

  const report = safeReporter(options.onParseError);

  /** A worker is gone: what it still owed is parsed here, as before workers existed. */
  const retire = (thread: ParseThread): void => {
    if (!threads.delete(thread)) return;
    clearTimeout(thread.idle);
    for (const job of thread.pending.values()) void inline(job.raw, job.context).then(job.resolve);
    thread.pending.clear();
    void thread.worker.terminate();
  };

  const spawn = (): ParseThread => {
    const { url, execArgv } = workerEntry();
    const worker = new Worker(url, { workerData: { limits }, execArgv });
    const thread: ParseThread = { worker, pending: new Map(), idle: undefined };
    worker.on('message', (reply: ParseReply) => {
      const job = thread.pending.get(reply.id);
      if (job === undefined) return;
      thread.pending.delete(reply.id);
      for (const message of reply.errors) report(new Error(message));
      job.resolve(reply.parsed);
      if (thread.pending.size === 0) rest(thread);
    });
    worker.on('error', () => retire(thread));
    worker.on('exit', () => retire(thread));
    threads.add(thread);
    return thread;
  };

  /** Nothing pending: the thread must not keep the process alive, and exits when idle long. */
  const rest = (thread: ParseThread): void => {
    thread.worker.unref();
    thread.idle = setTimeout(() => retire(thread), idleMs);
    thread.idle.unref();
  };

  /** The least busy thread; a new one while under the limit and every thread has work. */
  const pick = (): ParseThread => {
    let best: ParseThread | undefined;
    for (const thread of threads) if (best === undefined || thread.pending.size < best.pending.size) best = thread;
    if (best === undefined || (best.pending.size > 0 && threads.size < maxThreads)) return spawn();
    return best;
  };

  return (raw, context) =>
    new Promise<ParsedMail>((resolve) => {
      const thread = pick();
      clearTimeout(thread.idle);
      thread.worker.ref();
      const id = (nextId += 1);
      const deadline = setTimeout(() => {
        if (!thread.pending.delete(id)) return;
        report(new Error(`MIME parse took over ${deadlineMs} ms; stored the header-only fallback parse`));
        resolve(fallbackOrEmpty(raw, limits, report));
        // The thread may be stuck in this message: its other messages are parsed here.
        retire(thread);
      }, deadlineMs);
      deadline.unref();
      const settle = (parsed: ParsedMail): void => {
        clearTimeout(deadline);
        resolve(parsed);
      };
      thread.pending.set(id, { raw, context, resolve: settle });
      const request: ParseRequest = { id, raw, context };
      try {
        thread.worker.postMessage(request);
      } catch {
        retire(thread);
      }
    });
}
