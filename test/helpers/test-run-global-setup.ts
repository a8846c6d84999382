import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { TEST_RUN_VARIABLE } from './child-processes.js';
import { killLeftovers, waitForNoLeftovers } from './leftover-processes.js';

/** Time for processes stopped at the very end (a browser's helper processes after its close) to finish exiting before they count as left over. */
const LEFTOVER_GRACE_MS = 5_000;

/**
 * Before the run (vitest.config.ts, globalSetup): a fresh id in the environment that the test
 * workers and every process they start inherit. Always a new one, so that a vitest run started
 * by a test has its own.
 */
export function setup(): void {
  process.env[TEST_RUN_VARIABLE] = randomUUID();
}

/**
 * After the run, once every worker has exited: any process still carrying the id is one a test
 * file started and did not stop. It is listed, killed, and the run fails.
 */
export async function teardown(): Promise<void> {
  const runId = process.env[TEST_RUN_VARIABLE];
  if (runId === undefined) return;
  if (!existsSync('/proc/self/environ')) {
    console.warn('leftover check skipped: it reads /proc, which this system does not have');
    return;
  }
  const left = await waitForNoLeftovers(runId, new Set([process.pid]), LEFTOVER_GRACE_MS);
  if (left.length === 0) return;
  killLeftovers(left);
  const lines = left.map(({ pid, command }) => `  ${pid} ${command}`).join('\n');
  process.stdout.write(`\n${left.length} process(es) started by the tests were still running at the end of the run (now killed):\n${lines}\nfailing the run: a test file must stop what it starts (test/helpers/child-processes.ts)\n`);
  process.exitCode = 1;
}
