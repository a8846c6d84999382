import { Piscina } from 'piscina';
import type { SenderAuthenticator, SenderAuthInput, SenderAuthOutcome } from '../ports/sender-auth.js';
import { formatAuthenticationResults } from './authentication-results-header.js';
import { AUTH_CPU_GRACE_MS } from './mailauth-sender-authenticator.js';
import { unverified } from './map-mailauth-result.js';
import type { SenderAuthReply, SenderAuthWorkerData } from './sender-auth-worker.js';

/**
 * Checks the one thread runs at once. Most of a check can be a wait for DNS (up to
 * DNS_TIMEOUT_MS), so checks overlap as they do on an event loop: one per SMTP connection the
 * listener admits (MAX_CLIENTS, 1,000) lets every open transaction's check run, even with a
 * dead resolver. Past it checks wait in piscina's queue, and one that has not finished by
 * its backstop (below) is stored with `temperror`.
 */
export const MAX_CONCURRENT_SENDER_CHECKS = 1_000;

/**
 * Time a check may take on top of DNS_TIMEOUT_MS, counted from when it is handed to the
 * thread: the thread's start on the first message (tens of ms; a second or more when the
 * sources are compiled on the fly under tsx in tests) and the checks' own CPU
 * (AUTH_CPU_GRACE_MS). Past it the message is stored with `temperror`.
 */
export const SENDER_CHECK_BACKSTOP_MS = AUTH_CPU_GRACE_MS + 2_000;

/**
 * V8 heap of the thread (old generation). A check holds its message (at most 10 MiB,
 * MAX_MESSAGE_BYTES) and mailauth's header structures; a few large messages at once fit in
 * 256 MiB, and past it the thread dies with ERR_WORKER_OUT_OF_MEMORY: the checks in it are
 * stored with `temperror` and piscina starts a fresh thread, instead of the process growing
 * until the kernel kills it.
 */
export const SENDER_AUTH_WORKER_MAX_OLD_GENERATION_MB = 256;

/**
 * Young generation of the thread. A check allocates many short-lived strings (header lines,
 * DNS records, result texts); 32 MiB keeps them in cheap scavenges (a worker's default is
 * far smaller), counted on top of the old generation.
 */
export const SENDER_AUTH_WORKER_MAX_YOUNG_GENERATION_MB = 32;

/** The function of the worker module that piscina calls (sender-auth-worker.ts). */
const WORKER_EXPORT = 'checkInWorker';

/** Options of createWorkerSenderAuthenticator. */
export interface WorkerSenderAuthenticatorOptions extends SenderAuthWorkerData {
  /** Told when a check failed as a whole (a library error, a dead thread, the backstop). */
  onError?: (error: unknown) => void;
}

/** A SenderAuthenticator holding a thread that close() ends; checks after it are `temperror`. */
export type ClosableSenderAuthenticator = SenderAuthenticator & { close(): Promise<void> };

/** The compiled worker next to this file; under tsx or vitest (running the .ts sources) the .ts file. */
function workerEntry(): { url: URL; execArgv: string[] } {
  const fromSource = import.meta.url.endsWith('.ts');
  return {
    url: new URL(fromSource ? './sender-auth-worker.ts' : './sender-auth-worker.js', import.meta.url),
    execArgv: fromSource ? ['--import', 'tsx'] : [],
  };
}

/**
 * The sender checks (MailauthSenderAuthenticator) in one worker thread of their own, so that
 * their CPU (~300 µs for a 4 KB message, most of it mailauth's parsing, hashing and record
 * evaluation: docs/benchmarks.md, "Sender authentication: what it costs") is off the event
 * loop. One thread, kept for the life of the service, holds the one DNS answer cache of all
 * messages. Not the MIME parse pool: its workers take one message at a time, and a check
 * waiting for a slow resolver would hold a parse worker for up to DNS_TIMEOUT_MS. Never
 * rejects: a thread that fails or a check past SENDER_CHECK_BACKSTOP_MS gives `temperror`.
 */
export function createWorkerSenderAuthenticator(options: WorkerSenderAuthenticatorOptions): ClosableSenderAuthenticator {
  const { onError, ...workerData } = options;
  const { url, execArgv } = workerEntry();
  const report = (error: unknown): void => {
    try {
      onError?.(error);
    } catch {
      // A failing logger must not turn a delivered message into a lost one.
    }
  };
  // Started on the first message, so that an app that never receives mail starts no thread.
  let pool: Piscina<SenderAuthInput, SenderAuthReply> | undefined;
  let closed = false;
  const startPool = (): Piscina<SenderAuthInput, SenderAuthReply> => {
    const started = new Piscina<SenderAuthInput, SenderAuthReply>({
      filename: url.href,
      name: WORKER_EXPORT,
      execArgv,
      workerData: workerData satisfies SenderAuthWorkerData,
      // One thread, always there: it holds the DNS answer cache, which an idle exit would drop.
      minThreads: 1,
      maxThreads: 1,
      concurrentTasksPerWorker: MAX_CONCURRENT_SENDER_CHECKS,
      // The thread awaits DNS answers: its event loop must run, not sleep in Atomics.wait.
      atomics: 'disabled',
      resourceLimits: { maxOldGenerationSizeMb: SENDER_AUTH_WORKER_MAX_OLD_GENERATION_MB, maxYoungGenerationSizeMb: SENDER_AUTH_WORKER_MAX_YOUNG_GENERATION_MB },
      // Run and wait-time histograms per task: nobody reads them, and each check would pay for them.
      recordTiming: false,
    });
    // The thread failing with no check in it (e.g. while idle): nothing is owed to anyone.
    started.on('error', report);
    return started;
  };
  const temperror = (): SenderAuthOutcome => {
    const auth = unverified();
    return { auth, header: Buffer.from(formatAuthenticationResults(options.serverName, auth), 'utf8') };
  };

  const check = async (input: SenderAuthInput): Promise<SenderAuthOutcome> => {
    if (closed) return temperror();
    // A copy of exactly the message's bytes in a buffer of its own, moved to the thread: the
    // received bytes may be a view into a larger buffer (which would be cloned whole, or, as
    // a Buffer of Node's shared pool, cannot be moved), and stay ours to store. Not slice():
    // on a Buffer that is a view, not a copy.
    const message = new Uint8Array(input.message);
    let timer: NodeJS.Timeout | undefined;
    const backstop = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`sender checks took over ${options.dnsTimeoutMs + SENDER_CHECK_BACKSTOP_MS} ms`)), options.dnsTimeoutMs + SENDER_CHECK_BACKSTOP_MS);
    });
    try {
      // No abort signal: piscina would end the thread, and with it every other check and the cache.
      const task = (pool ??= startPool()).run({ ...input, message }, { transferList: [message.buffer] });
      task.catch(() => undefined); // Settled after the backstop: nobody waits for it any more.
      const reply = await Promise.race([task, backstop]);
      if (reply.error !== undefined) report(new Error(reply.error));
      return reply.outcome;
    } catch (error) {
      report(error);
      return temperror();
    } finally {
      clearTimeout(timer);
    }
  };

  return {
    check,
    async close(): Promise<void> {
      closed = true;
      await pool?.destroy();
    },
  };
}
