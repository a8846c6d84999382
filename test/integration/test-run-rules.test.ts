import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { killGroup, spawnTestChild, waitForExit } from '../helpers/child-processes.js';
import { findProcessesWithEnv, killLeftovers } from '../helpers/leftover-processes.js';

/**
 * The rules of the test run itself, proved on small vitest runs of test/fixtures/test-run/ with
 * the suite's own set-up: no process a test started outlives the run.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const VITEST = resolve(ROOT, 'node_modules/vitest/vitest.mjs');
const FIXTURE_CONFIG = resolve(ROOT, 'test/fixtures/test-run/vitest.config.ts');
/** A whole fixture run: vitest's start (about 1 s), a server start, the end-of-run grace. */
const FIXTURE_RUN_MS = 40_000;

/** Runs the fixture files whose names contain one of `filters`: vitest's exit code and everything it printed. */
async function runFixtures(filters: string[], env: Record<string, string>): Promise<{ code: number | null | undefined; output: string }> {
  const child = spawnTestChild(process.execPath, [VITEST, 'run', '--config', FIXTURE_CONFIG, ...filters], { cwd: ROOT, env: { NO_COLOR: '1', ...env } });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const code = await waitForExit(child, FIXTURE_RUN_MS);
  if (code === undefined) killGroup(child);
  return { code, output };
}

describe('nothing a test started outlives the run', { timeout: FIXTURE_RUN_MS + 5_000 }, () => {
  const data = mkdtempSync(join(tmpdir(), 'tempinbox-orphan-'));
  /** The fixture server's environment entry, unique to this test: how to find it whatever its parents did. */
  const serverEntry = `DATABASE_URL=sqlite:${data}/tempinbox.db`;
  afterAll(() => {
    // If a rule is broken, the test fails and still cleans up after itself.
    killLeftovers([...findProcessesWithEnv(serverEntry), ...findProcessesWithEnv('FIXTURE_LEAVES_A_CHILD=1')]);
    rmSync(data, { recursive: true, force: true });
  });

  it('stops the server of a file whose set-up failed, and names, kills and fails on a process left running', async () => {
    const { code, output } = await runFixtures(['fails-in-set-up', 'leaves-a-child'], { PATH: process.env.PATH ?? '', FIXTURE_DATA_DIR: data, FIXTURE_LEAVES_A_CHILD: '1' });
    expect(code, output).toBe(1);
    expect(output).toContain('the browser did not launch');
    const report = output.slice(output.indexOf('still running at the end of the run'));
    expect(report, output).toMatch(/^still running at the end of the run \(now killed\):\n {2}\d+ \S*node -e setTimeout\(\(\) => \{\}, 60_000\) left-behind-by-fixture\nfailing the run/);
    expect(report).not.toContain('dist/main.js');
    expect(findProcessesWithEnv(serverEntry)).toEqual([]);
    expect(findProcessesWithEnv('FIXTURE_LEAVES_A_CHILD=1')).toEqual([]);
  });
});
