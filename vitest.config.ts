import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // web/src: unit tests of the web app's pure parts (reducer, wording), beside the code.
    // packages/*/test: the developer kit's tests (library, CLI, MCP server), against a real server.
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'web/src/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    // Network and process tests start real servers; keep parallelism modest on 2 cores.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 30_000,
    reporters: ['default', './test/helpers/summary-reporter.ts'],
    // A fresh run id that every process the tests start carries, and the end-of-run check that
    // none of them is left (test/helpers/test-run-global-setup.ts).
    globalSetup: ['./test/helpers/test-run-global-setup.ts'],
    // After each file's own hooks: stop what it started and did not stop (a failed set-up).
    setupFiles: ['./test/helpers/stop-started-children.ts'],
  },
});
