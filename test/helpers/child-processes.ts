import { spawn, type ChildProcess, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';

/**
 * The variable that marks every process this test run starts (test/helpers/test-run-global-setup.ts
 * sets a fresh value per run; children inherit it), so the end of the run can find what is left.
 */
export const TEST_RUN_VARIABLE = 'TEMPINBOX_TEST_RUN';

/** How long a child gets to exit after SIGTERM before its process group is killed: the service's own shutdown deadline is 10 s. */
export const STOP_GRACE_MS = 12_000;
/** How long a SIGKILLed group takes to be reaped; only a stuck kernel exceeds it. */
const KILL_WAIT_MS = 5_000;
/** The longest stopChild can take, for the hooks that call it. */
export const STOP_BUDGET_MS = STOP_GRACE_MS + KILL_WAIT_MS;

/**
 * What this test file started and has not seen end. Every test file runs in a process of its
 * own, so this is per file; test/helpers/stop-started-children.ts empties it in an afterAll.
 */
const running = new Set<ChildProcess>();
/** Closers for things holding processes that the file did not spawn itself (a browser). */
const closers = new Set<() => Promise<void>>();

/** The environment a child gets: PATH, this run's marker, then `env`; nothing else of the test process leaks in. */
export function childEnv(env: Record<string, string>): Record<string, string> {
  const marker = process.env[TEST_RUN_VARIABLE];
  return { PATH: process.env.PATH ?? '', ...(marker === undefined ? {} : { [TEST_RUN_VARIABLE]: marker }), ...env };
}

/** Options of spawnTestChild: its environment (passed through childEnv) and folder. */
export interface TestChildOptions {
  env: Record<string, string>;
  cwd?: string;
}

/** A spawned test child: no stdin, stdout and stderr piped to the test. */
export type TestChild = ChildProcessByStdio<null, Readable, Readable>;

/**
 * Spawns a child in a process group of its own (so that it and anything it starts can be
 * killed as one), marked with this run's id, and remembered until it exits, so that the file's
 * end stops it even when the test that started it failed before keeping a handle.
 */
export function spawnTestChild(command: string, args: string[], options: TestChildOptions): TestChild {
  const child = spawn(command, args, { cwd: options.cwd, env: childEnv(options.env), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  running.add(child);
  child.once('exit', () => running.delete(child));
  // spawn failures (ENOENT) end in 'error' without 'exit'.
  child.once('error', () => running.delete(child));
  return child;
}

/** Resolves with the exit code (null after a signal) once the child has exited, or `undefined` after `ms`. */
export function waitForExit(child: ChildProcess, ms: number): Promise<number | null | undefined> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((done) => {
    const timer = setTimeout(() => done(undefined), ms);
    child.once('exit', (code) => {
      clearTimeout(timer);
      done(code);
    });
  });
}

/** SIGKILLs the child's whole process group, only while the child itself is unreaped (so the group id cannot belong to anyone else). */
export function killGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // ESRCH: it ended between the check and the kill.
  }
}

/**
 * Sends SIGTERM and waits up to STOP_GRACE_MS; past that, kills the group and waits for it.
 * Resolves with the exit code, or null when it ended by a signal.
 */
export async function stopChild(child: ChildProcess): Promise<number | null> {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  const code = await waitForExit(child, STOP_GRACE_MS);
  if (code !== undefined) return code;
  killGroup(child);
  await waitForExit(child, KILL_WAIT_MS);
  return null;
}

/** Closes `close` at the end of this file unless `forget` was called first. */
export function closeAtFileEnd(close: () => Promise<void>): { forget: () => void } {
  closers.add(close);
  return { forget: () => void closers.delete(close) };
}

/** Stops everything this file started and did not stop itself, all at once: each child with stopChild, and the closers. */
export async function stopStartedChildren(): Promise<void> {
  const children = [...running];
  const closing = [...closers];
  closers.clear();
  await Promise.all([...children.map((child) => stopChild(child)), ...closing.map((close) => close().catch(() => undefined))]);
}

/** Kills the group of every child still running, at once: for a process 'exit' handler, which cannot wait. */
export function killStartedGroups(): void {
  for (const child of running) killGroup(child);
}
