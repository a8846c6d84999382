import { readFileSync } from 'node:fs';
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
