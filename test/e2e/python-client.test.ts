import { spawn, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The Python client's own suite (clients/python/tests, standard-library unittest) run with the
 * machine's python3: its end-to-end tests start dist/main.js with the Node that runs this file,
 * and its install test builds a wheel and installs it into a fresh venv with nothing from a
 * package index. Here so that `npm test` covers the Python client on every machine and in CI.
 * Each test module runs in its own python3, side by side: they spend their time waiting for
 * held requests, timeouts and Retry-After, not on the CPU.
 */

const PACKAGE_DIR = resolve(import.meta.dirname, '../../clients/python');
const PYTHON = process.env.TEMPINBOX_PYTHON ?? 'python3';
/** In CI a missing tool fails the run instead of skipping (.ci/run sets it). */
const TOOLS_REQUIRED = process.env.TEMPINBOX_REQUIRE_TOOLS === '1';
/** The suite's tests as written; fewer ran means discovery lost some. */
const MIN_PYTHON_TESTS = 49;
/** The slowest module takes ~20 s on a quiet machine; the rest is room for a loaded one. */
const MODULE_TIMEOUT_MS = 180_000;
/** A module still running this long is killed with everything it started (its servers, pip). */
const MODULE_KILL_MS = MODULE_TIMEOUT_MS - 10_000;
/** Output kept for a failure's message: the unittest report is at the end. */
const OUTPUT_KEPT_CHARS = 200_000;

function pythonVersion(): string | null {
  const probe = spawnSync(PYTHON, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { encoding: 'utf8', timeout: 30_000 });
  if (probe.status !== 0) return null;
  const version = probe.stdout.trim();
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major === 3 && minor >= 9 ? version : null;
}

const version = pythonVersion();
if (version === null) {
  const message = `Python client tests skipped: no ${PYTHON} 3.9 or later on PATH (set TEMPINBOX_PYTHON to use another).`;
  if (TOOLS_REQUIRED) throw new Error(`${message.replace('skipped', 'FAILED')} TEMPINBOX_REQUIRE_TOOLS=1 requires them.`);
  console.warn(message);
}

const modules = readdirSync(resolve(PACKAGE_DIR, 'tests'))
  .filter((name) => /^test_\w+\.py$/.test(name))
  .map((name) => name.slice(0, -'.py'.length))
  .sort();

/** Signals a process group, which may be gone already. */
function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: nothing of the group is left.
  }
}

/**
 * Runs one test module in a process group of its own, so that the servers and tools it starts
 * go with it: killed past MODULE_KILL_MS, and whatever it left running is killed at its end.
 */
function runModule(module: string): Promise<{ code: number | null; output: string }> {
  return new Promise((done) => {
    const child = spawn(PYTHON, ['-m', 'unittest', '-v', `tests.${module}`], {
      cwd: PACKAGE_DIR,
      detached: true,
      // The Node running this file starts the server; no bytecode left in the checkout.
      env: { ...process.env, TEMPINBOX_NODE: process.execPath, PYTHONDONTWRITEBYTECODE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const keep = (chunk: string) => (output = (output + chunk).slice(-OUTPUT_KEPT_CHARS));
    child.stdout.setEncoding('utf8').on('data', keep);
    child.stderr.setEncoding('utf8').on('data', keep);
    const timer = setTimeout(() => {
      keep(`\n[killed after ${MODULE_KILL_MS} ms]\n`);
      killGroup(child.pid, 'SIGKILL');
    }, MODULE_KILL_MS);
    child.once('close', (code) => {
      clearTimeout(timer);
      killGroup(child.pid, 'SIGKILL');
      done({ code, output });
    });
  });
}

describe.skipIf(version === null)(`the Python client (clients/python) on Python ${version ?? '-'}`, () => {
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
