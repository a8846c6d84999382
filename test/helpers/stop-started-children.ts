import { afterAll } from 'vitest';
import { killStartedGroups, STOP_BUDGET_MS, stopStartedChildren } from './child-processes.js';

// Loaded before every test file (vitest.config.ts, setupFiles): after the file's own hooks,
// stops whatever it started through test/helpers/child-processes.ts and did not stop, so a
// file that fails in its set-up leaves no server or browser running.

/** The closers (a browser's close) run alongside the children; a second on top covers them. */
const HOOK_MARGIN_MS = 1_000;

afterAll(stopStartedChildren, STOP_BUDGET_MS + HOOK_MARGIN_MS);
// A worker that ends without running its hooks (an uncaught error) still takes its children along.
process.once('exit', killStartedGroups);
