import type { Reporter, TestModule } from 'vitest/node';

/**
 * Prints the closing line CI reads (`N passed, N failed[, N skipped]`) and fails the run
 * when no test executed at all, so an empty suite can never pass silently.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      // A module that failed to load (syntax error, throwing hook) counts as a failure.
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) failed += 1;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failed += 1;
        else skipped += 1;
      }
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
    if (passed + failed === 0) {
      process.stdout.write('no test ran: failing the run\n');
      process.exitCode = 1;
    }
  }
}
