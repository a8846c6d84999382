import { readdirSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';

/** Kernel clock ticks per second, the unit of utime/stime in /proc/<pid>/stat. */
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** CPU time (user + system, seconds) a process has used so far, all threads, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  return statCpuSeconds(`/proc/${pid}/stat`);
}

/**
 * CPU time (seconds) of a process's main thread alone (Node's event loop), from
 * /proc/<pid>/task/<pid>/stat: the main thread's task id is the process id.
 */
export function mainThreadCpuSeconds(pid: number): number {
  return statCpuSeconds(`/proc/${pid}/task/${pid}/stat`);
}

/** utime + stime of a /proc stat file, in seconds. */
function statCpuSeconds(path: string): number {
  const stat = readFileSync(path, 'utf8');
  // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of the whole line, 12 and 13 after the name.
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

/** Resident set size and its peak (VmRSS, VmHWM) of a process, in MB. */
export function memoryMegabytes(pid: number): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string): number => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** One thread of a process: its name (/proc/<pid>/task/<tid>/comm) and times so far, in seconds. */
export interface ThreadCpu {
  tid: number;
  name: string;
  /** utime + stime (stat, clock ticks). */
  seconds: number;
  /** Time on a CPU and time runnable but waiting for one (schedstat, ns resolution); NaN without schedstat. */
  onCpu: number;
  runQueue: number;
}

/**
 * CPU time (seconds) of every live thread of a process, by thread id, from
 * /proc/<pid>/task/<tid>/stat and schedstat. Node names its threads: `MainThread`, `WorkerThread` (each
 * worker_threads Worker), `V8Worker` (V8's helpers: concurrent GC and compilation),
 * `libuv-worker` (the thread pool: file system calls), `v8:ProfEvntProc` (the CPU profiler).
 * A thread that exited is missing here, though its time still counts in cpuSeconds.
 */
export function threadCpuSeconds(pid: number): Map<number, ThreadCpu> {
  const threads = new Map<number, ThreadCpu>();
  for (const entry of readdirSync(`/proc/${pid}/task`)) {
    const tid = Number(entry);
    try {
      const name = readFileSync(`/proc/${pid}/task/${entry}/comm`, 'utf8').trim();
      const [onCpu, runQueue] = schedstat(`/proc/${pid}/task/${entry}/schedstat`);
      threads.set(tid, { tid, name, seconds: statCpuSeconds(`/proc/${pid}/task/${entry}/stat`), onCpu, runQueue });
    } catch {
      // The thread exited between the listing and the read.
    }
  }
  return threads;
}

/** The first two fields of a schedstat file (ns on a CPU, ns waiting in the run queue), in seconds. */
function schedstat(path: string): [number, number] {
  try {
    const [onCpu, runQueue] = readFileSync(path, 'utf8').trim().split(' ').map(Number);
    return [(onCpu ?? Number.NaN) / 1e9, (runQueue ?? Number.NaN) / 1e9];
  } catch {
    return [Number.NaN, Number.NaN];
  }
}

/** CPU share (of one core over 0.5 s) under which a process counts as idle. */
const IDLE_CPU_SHARE = 0.05;
/** How long one look at a process's CPU lasts. */
const IDLE_SAMPLE_MS = 500;

/**
 * Waits until `pid` used less than IDLE_CPU_SHARE of a core over half a second, for at most
 * `limitMs`; true once idle, false when the limit passed first.
 */
export async function waitUntilIdle(pid: number, limitMs: number): Promise<boolean> {
  const deadline = performance.now() + limitMs;
  while (performance.now() < deadline) {
    const before = cpuSeconds(pid);
    await new Promise((resolve) => setTimeout(resolve, IDLE_SAMPLE_MS));
    if (cpuSeconds(pid) - before < IDLE_CPU_SHARE * (IDLE_SAMPLE_MS / 1000)) return true;
  }
  return false;
}
