import { readdirSync, readFileSync } from 'node:fs';
import { TEST_RUN_VARIABLE } from './child-processes.js';

/** A process of a test run still alive at the run's end. */
export interface LeftoverProcess {
  pid: number;
  /** Its command line, shortened for a report. */
  command: string;
}

/** Enough of a command line to recognise it (`node … dist/main.js serve`, `chromium --type=…`). */
const COMMAND_SHOWN_CHARS = 200;
/** How often waitForNoLeftovers looks again while processes are still exiting. */
const POLL_MS = 100;

/** The contents of a /proc file, or undefined when the process is gone or not ours to read. */
function readProc(pid: string, file: string): Buffer | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`);
  } catch {
    return undefined;
  }
}

/**
 * Processes whose environment holds the entry `NAME=value` exactly, except the pids in
 * `exclude`. Linux only: it reads /proc/<pid>/environ, the environment a process started with,
 * which stays readable after its parent has exited.
 */
export function findProcessesWithEnv(entry: string, exclude: ReadonlySet<number> = new Set()): LeftoverProcess[] {
  const found: LeftoverProcess[] = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || exclude.has(Number(pid))) continue;
    const environ = readProc(pid, 'environ');
    if (environ === undefined || !environ.toString('latin1').split('\0').includes(entry)) continue;
    const command = (readProc(pid, 'cmdline') ?? Buffer.alloc(0)).toString('utf8').replaceAll('\0', ' ').trim();
    found.push({ pid: Number(pid), command: command.slice(0, COMMAND_SHOWN_CHARS) });
  }
  return found;
}

/**
 * What a test run still has running: its workers and everything they started carry
 * `TEMPINBOX_TEST_RUN=<runId>` (inherited, or given by childEnv).
 */
export function findLeftoverProcesses(runId: string, exclude: ReadonlySet<number>): LeftoverProcess[] {
  return findProcessesWithEnv(`${TEST_RUN_VARIABLE}=${runId}`, exclude);
}

/** Looks until none of the run's processes is left or `graceMs` has passed (processes still exiting get that long); returns what is left. */
export async function waitForNoLeftovers(runId: string, exclude: ReadonlySet<number>, graceMs: number): Promise<LeftoverProcess[]> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const left = findLeftoverProcesses(runId, exclude);
    if (left.length === 0 || Date.now() >= deadline) return left;
    await new Promise((done) => setTimeout(done, POLL_MS));
  }
}

/** SIGKILLs each process (each was just seen carrying the run's marker, so it is the run's own). */
export function killLeftovers(left: readonly LeftoverProcess[]): void {
  for (const { pid } of left) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // ESRCH: it ended meanwhile.
    }
  }
}
