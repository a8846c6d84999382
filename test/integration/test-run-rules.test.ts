import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { killGroup, spawnTestChild, waitForExit } from '../helpers/child-processes.js';
import { probeTool } from '../helpers/external-tools.js';
import { findProcessesWithEnv, killLeftovers } from '../helpers/leftover-processes.js';

/**
 * The rules of the test run itself (docs/development.md, "Tests"), proved on small vitest runs
 * of test/fixtures/test-run/ with the suite's own set-up: a missing tool skips its tests with one
 * line (and fails them under TEMPINBOX_REQUIRE_TOOLS=1), and no process a test started outlives
 * the run.
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

/** A script that exists and is executable but fails, as a broken install or a placeholder does. */
function writeScript(dir: string, name: string, body: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, name), `#!/bin/sh\n${body}\n`);
  chmodSync(join(dir, name), 0o755);
}

describe('external tools are found by running them', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tempinbox-tools-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('takes the first PATH entry holding the command, and only when its version command exits 0', () => {
    writeScript(join(dir, 'good'), 'swaks', 'echo "swaks version 1.0-test"');
    writeScript(join(dir, 'broken'), 'swaks', 'exit 3');
    writeFileSync(join(dir, 'good', 'openssl'), 'not a program');
    chmodSync(join(dir, 'good', 'openssl'), 0o644);

    expect(probeTool('swaks', join(dir, 'good'))).toEqual({ path: join(dir, 'good', 'swaks'), version: 'swaks version 1.0-test' });
    // A file that is there but does not run is missing, even with a working one further on.
    expect(probeTool('swaks', [join(dir, 'broken'), join(dir, 'good')].join(delimiter))).toEqual({
      missing: `\`swaks --version\` exited with 3 (${join(dir, 'broken', 'swaks')})`,
    });
    // Not executable: the search goes on, as a shell's does.
    expect(probeTool('openssl', join(dir, 'good'))).toEqual({ missing: 'openssl is not on PATH' });
    expect(probeTool('chromium', '')).toEqual({ missing: 'chromium is not on PATH' });
  });

  it('counts a tool with a minimum version only when the version it answers meets it', () => {
    for (const [folder, answer] of [['3.9', 'Python 3.9.0'], ['3.10', 'Python 3.10.12'], ['3.8', 'Python 3.8.10'], ['2.7', 'Python 2.7.18'], ['odd', 'no version here']]) {
      writeScript(join(dir, `python-${folder}`), 'python3', `echo "${answer}"`);
    }
    // 3.10 is later than 3.9: the parts compare as numbers, not as text.
    expect(probeTool('python3', join(dir, 'python-3.9'))).toEqual({ path: join(dir, 'python-3.9', 'python3'), version: 'Python 3.9.0' });
    expect(probeTool('python3', join(dir, 'python-3.10'))).toEqual({ path: join(dir, 'python-3.10', 'python3'), version: 'Python 3.10.12' });
    for (const [folder, answer] of [['3.8', 'Python 3.8.10'], ['2.7', 'Python 2.7.18'], ['odd', 'no version here']]) {
      const path = join(dir, `python-${folder}`, 'python3');
      expect(probeTool('python3', join(dir, `python-${folder}`))).toEqual({ missing: `\`python3 --version\` answered "${answer}" (${path}): 3.9 or later is needed` });
    }
    // The first python3 on PATH decides, as a shell's search does: a newer one further on does not count.
    expect(probeTool('python3', [join(dir, 'python-3.8'), join(dir, 'python-3.10')].join(delimiter))).toMatchObject({ missing: expect.stringContaining('Python 3.8.10') });
  });
});

describe('a run without the external tools', { timeout: FIXTURE_RUN_MS + 5_000 }, () => {
  // chromium there but broken, swaks and openssl absent; node itself is not looked up on PATH.
  const bin = mkdtempSync(join(tmpdir(), 'tempinbox-no-tools-'));
  writeScript(bin, 'chromium', 'exit 127');
  afterAll(() => rmSync(bin, { recursive: true, force: true }));

  it('skips each tool\'s tests with one line naming it and how to get it, and passes', async () => {
    const { code, output } = await runFixtures(['needs-'], { PATH: bin, TEMPINBOX_REQUIRE_TOOLS: '0' });
    expect(code, output).toBe(0);
    const skipLines = output.split('\n').filter((line) => /^\w+ tests skipped/.test(line));
    expect(skipLines.sort(), output).toEqual([
      `chromium tests skipped (fixture): \`chromium --version\` exited with 127 (${join(bin, 'chromium')}). Install it: sudo apt-get install chromium (as .ci/run does).`,
      'openssl tests skipped (fixture): openssl is not on PATH. Install it: sudo apt-get install openssl (as .ci/run does).',
      'swaks tests skipped (fixture): swaks is not on PATH. Install it: sudo apt-get install swaks (as .ci/run does).',
    ]);
    // The closing line still counts the skipped tests.
    expect(output).toMatch(/^3 passed, 0 failed, 3 skipped$/m);
  });

  it('fails every file that needs a missing tool when TEMPINBOX_REQUIRE_TOOLS=1', async () => {
    const { code, output } = await runFixtures(['needs-'], { PATH: bin, TEMPINBOX_REQUIRE_TOOLS: '1' });
    expect(code, output).toBe(1);
    for (const tool of ['chromium', 'swaks', 'openssl']) {
      expect(output).toMatch(new RegExp(`${tool} tests FAILED \\(fixture\\): .*TEMPINBOX_REQUIRE_TOOLS=1 requires them\\.`));
    }
    expect(output).not.toMatch(/^\w+ tests skipped/m);
    expect(output).toMatch(/^0 passed, 3 failed$/m);
  });
});

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
