import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { killGroup, spawnTestChild } from '../helpers/child-processes.js';
import { toolAvailable, toolPath } from '../helpers/external-tools.js';

/**
 * The Python client's own suite (clients/python/tests, standard-library unittest) run with the
 * machine's python3: its end-to-end tests start dist/main.js with the Node that runs this file,
 * and its install test builds a wheel and installs it into a fresh venv with nothing from a
 * package index. Here so that `npm test` covers the Python client on every machine and in CI.
 * Each test module runs in its own python3, side by side: they spend their time waiting for
 * held requests, timeouts and Retry-After, not on the CPU.
 */

const PACKAGE_DIR = resolve(import.meta.dirname, '../../clients/python');
/** The suite's tests as written; fewer ran means discovery lost some. */
const MIN_PYTHON_TESTS = 52;
/** The slowest module takes ~20 s on a quiet machine; the rest is room for a loaded one. */
const MODULE_TIMEOUT_MS = 180_000;
/** A module still running this long is killed with everything it started (its servers, pip). */
const MODULE_KILL_MS = MODULE_TIMEOUT_MS - 10_000;
/** Output kept for a failure's message: the unittest report is at the end. */
const OUTPUT_KEPT_CHARS = 200_000;
/**
 * What a module needs of this process's environment besides PATH and the run marker: HOME and
 * TMPDIR for pip and tempfile, and TEMPINBOX_REQUIRE_TOOLS, which turns the suite's own skips
 * (no pip, no venv module) into failures in CI.
 */
const PASSED_ON = ['HOME', 'TMPDIR', 'TEMPINBOX_REQUIRE_TOOLS'] as const;

const hasPython = toolAvailable('python3', 'the Python client: clients/python/tests');
/** The python3 that passed the check, by its absolute path: the modules run with that one. */
const PYTHON = hasPython ? toolPath('python3') : 'python3';

const modules = readdirSync(resolve(PACKAGE_DIR, 'tests'))
  .filter((name) => /^test_\w+\.py$/.test(name))
  .map((name) => name.slice(0, -'.py'.length))
  .sort();

/** The module's environment: what it needs of ours, the Node that starts its servers, no bytecode left in the checkout. */
function moduleEnv(): Record<string, string> {
  const env: Record<string, string> = { TEMPINBOX_NODE: process.execPath, PYTHONDONTWRITEBYTECODE: '1' };
  for (const name of PASSED_ON) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** Signals what is left of a module's process group once the module itself has exited; it may be gone already. */
function killLeftInGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // ESRCH: nothing of the group is left.
  }
}

/**
 * Runs one test module in a process group of its own (spawnTestChild: marked with this run's
 * id, stopped at the file's end), so that the servers and tools it starts go with it: killed
 * past MODULE_KILL_MS, and whatever it left running is killed at its end.
 */
function runModule(module: string): Promise<{ code: number | null; output: string }> {
  return new Promise((done) => {
    const child = spawnTestChild(PYTHON, ['-m', 'unittest', '-v', `tests.${module}`], { cwd: PACKAGE_DIR, env: moduleEnv() });
    let output = '';
    const keep = (chunk: string) => (output = (output + chunk).slice(-OUTPUT_KEPT_CHARS));
    child.stdout.setEncoding('utf8').on('data', keep);
    child.stderr.setEncoding('utf8').on('data', keep);
    const timer = setTimeout(() => {
      keep(`\n[killed after ${MODULE_KILL_MS} ms]\n`);
      killGroup(child);
    }, MODULE_KILL_MS);
    child.once('close', (code) => {
      clearTimeout(timer);
      // The group's id stays taken while any member lives, so this reaches only what the module left.
      killLeftInGroup(child.pid);
      done({ code, output });
    });
  });
}

describe.skipIf(!hasPython)(`the Python client (clients/python) with ${PYTHON}`, () => {
  let ranInAll = 0;
  let skippedInAll = 0;
  let modulesRun = 0;

  it('finds its test modules', () => {
    expect(modules).toEqual(expect.arrayContaining(['test_calls', 'test_install', 'test_retries', 'test_waits']));
  });

  it.concurrent.each(modules)(
    '%s passes',
    async (module) => {
      const { code, output } = await runModule(module);
      const ran = Number(/^Ran (\d+) tests? in /m.exec(output)?.[1] ?? 0);
      expect(code, output).toBe(0);
      expect(ran, output).toBeGreaterThan(0);
      ranInAll += ran;
      modulesRun += 1;
      skippedInAll += Number(/^OK \(skipped=(\d+)\)$/m.exec(output)?.[1] ?? 0);
    },
    MODULE_TIMEOUT_MS,
  );

  afterAll(() => {
    if (skippedInAll > 0) console.warn(`Python client tests: ${skippedInAll} of ${ranInAll} skipped (run them with -v to see why)`);
    // Only when every module ran (not with vitest -t picking some).
    if (modulesRun === modules.length) expect(ranInAll).toBeGreaterThanOrEqual(MIN_PYTHON_TESTS);
  });
});
