import type { BenchDb } from './bench-db.js';
import { DOMAIN, RECIPIENT_LOCAL } from './bench-db.js';
import { cpuSeconds, mainThreadCpuSeconds } from './process-stats.js';
import { runSmtpSource } from './smtp-source.js';
import { median } from './stats.js';

/** One SMTP ingest configuration of figure 1. */
export interface IngestCase {
  label: string;
  size: number;
  sessions: number;
  keepConnection: boolean;
  /** A prepared message to send instead of smtp-source's (bench/sender-auth-figures.ts: a signed one). */
  messageFile?: string;
}

/** Figure 1's eight cases: 4 KB and 100 KB, many per connection at 10/50, one per connection at 50/500. */
export const INGEST_CASES: readonly IngestCase[] = [4096, 102_400].flatMap((size) => {
  const kb = `${size / 1024} KB`;
  return [
    { label: `${kb}, many per conn, 10 conns`, size, sessions: 10, keepConnection: true },
    { label: `${kb}, many per conn, 50 conns`, size, sessions: 50, keepConnection: true },
    { label: `${kb}, one per conn, 50 conns`, size, sessions: 50, keepConnection: false },
    { label: `${kb}, one per conn, 500 conns`, size, sessions: 500, keepConnection: false },
  ];
});

/** An SMTP server to drive: the service (with its database, to verify), a peer, or the floor. */
export interface SmtpTarget {
  port: number;
  pid: number;
  /** Seeds the recipients and counts what was stored (verification); none: nothing is verified. */
  db?: BenchDb;
  /** Runs before each run, untimed (a peer that keeps every message in memory is emptied). */
  reset?: () => Promise<void>;
}

/** One measured run. */
export interface IngestRun {
  messages: number;
  seconds: number;
  rate: number;
  cpuMsPerMessage: number;
  /** The main thread's (event loop's) share of cpuMsPerMessage. */
  mainCpuMsPerMessage: number;
  /** Messages stored during the run (service only). */
  stored?: number;
}

/** Figure 1 for one case on one target: medians over the runs. */
export interface IngestFigure {
  rate: number;
  cpuMsPerMessage: number;
  mainCpuMsPerMessage: number;
  runs: IngestRun[];
  /** Stored = sent in every run (null for the floor, which stores nothing). */
  verified: boolean | null;
  error?: string;
}

/** Most messages one run sends; beyond that a run would outlast its slot by far. */
const MAX_MESSAGES_PER_RUN = 500_000;

/**
 * Measures one case: a short calibration run sizes the message count so each measured run
 * lasts about `seconds` (smtp-source sends a count, not a duration), then `runs` runs,
 * each timed from start to the last 250, with the server's CPU time read around it.
 */
export async function measureIngest(
  binary: string,
  target: SmtpTarget,
  testCase: IngestCase,
  runs: number,
  seconds: number,
): Promise<IngestFigure> {
  const [figure] = await measureIngestAlternating(binary, [target], testCase, runs, seconds);
  if (figure === undefined) throw new Error('no figure measured');
  return figure;
}

/**
 * One case on several targets compared with each other (the service and a peer): each is
 * calibrated, then the runs take turns, target after target, so that a change in the
 * machine's load during the measurement falls on all of them alike. One figure per target,
 * in the order given; a target that fails gets its error and the others go on.
 */
export async function measureIngestAlternating(
  binary: string,
  targets: readonly SmtpTarget[],
  testCase: IngestCase,
  runs: number,
  seconds: number,
): Promise<IngestFigure[]> {
  const states: TargetState[] = targets.map((target) => ({ target, rate: Number.NaN, runs: [] }));
  const attempt = async (state: TargetState, messages: () => number): Promise<IngestRun | undefined> => {
    if (state.error !== undefined) return undefined;
    try {
      await state.target.reset?.();
      const run = await sendRun(binary, state.target, testCase, messages());
      state.rate = run.rate;
      return run;
    } catch (error) {
      state.error = String(error);
      return undefined;
    }
  };
  for (const state of states) state.calibration = await attempt(state, () => Math.max(100, testCase.sessions * (testCase.keepConnection ? 10 : 1)));
  for (let i = 0; i < runs; i += 1) {
    for (const state of states) {
      const run = await attempt(state, () => Math.min(MAX_MESSAGES_PER_RUN, Math.max(testCase.sessions, Math.ceil(state.rate * seconds))));
      if (run !== undefined) state.runs.push(run);
    }
  }
  return states.map(({ target, calibration, runs: measured, error }) => {
    if (error !== undefined || calibration === undefined) {
      return { rate: Number.NaN, cpuMsPerMessage: Number.NaN, mainCpuMsPerMessage: Number.NaN, runs: [], verified: false, error: error ?? 'not calibrated' };
    }
    return {
      rate: median(measured.map((run) => run.rate)),
      cpuMsPerMessage: median(measured.map((run) => run.cpuMsPerMessage)),
      mainCpuMsPerMessage: median(measured.map((run) => run.mainCpuMsPerMessage)),
      runs: measured,
      verified: target.db === undefined ? null : [calibration, ...measured].every((run) => run.stored === run.messages),
    };
  });
}

/** What measureIngestAlternating knows of one target so far. */
interface TargetState {
  target: SmtpTarget;
  /** The last run's rate, which sizes the next run. */
  rate: number;
  calibration?: IngestRun;
  runs: IngestRun[];
  error?: string;
}

/** One run of `messages` messages on one target, timed to the last 250, its CPU read around it. */
async function sendRun(binary: string, target: SmtpTarget, testCase: IngestCase, messages: number): Promise<IngestRun> {
  const recipient = `${RECIPIENT_LOCAL}@${DOMAIN}`;
  await target.db?.ensureRecipients(messages);
  const before = await target.db?.countMessages();
  const cpuBefore = cpuSeconds(target.pid);
  const mainCpuBefore = mainThreadCpuSeconds(target.pid);
  const result = await runSmtpSource(binary, {
    port: target.port,
    sessions: testCase.sessions,
    messages,
    size: testCase.size,
    keepConnection: testCase.keepConnection,
    recipient,
    messageFile: testCase.messageFile,
  });
  const cpu = cpuSeconds(target.pid) - cpuBefore;
  const mainCpu = mainThreadCpuSeconds(target.pid) - mainCpuBefore;
  if (!result.ok) throw new Error(`smtp-source failed after ${result.seconds.toFixed(1)} s: ${result.stderr}`);
  const after = await target.db?.countMessages();
  return {
    messages,
    seconds: result.seconds,
    rate: messages / result.seconds,
    cpuMsPerMessage: (cpu * 1000) / messages,
    mainCpuMsPerMessage: (mainCpu * 1000) / messages,
    stored: before === undefined || after === undefined ? undefined : after - before,
  };
}
