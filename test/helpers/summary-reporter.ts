import type { Reporter, TestModule } from 'vitest/node';

/**
 * Prints the closing line CI reads (`N passed, N failed[, N skipped]`) and fails the run
 * when no test executed at all, so an empty suite can never pass silently.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown> = []): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      let failedTests = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        else if (state === 'failed') failedTests += 1;
        else skipped += 1;
      }
      failed += failedTests;
      // A module or suite that failed by itself (a syntax error, a throwing beforeAll: its tests
      // then show as skipped) counts as one failure, so the closing line never reads "0 failed"
      // for a run that failed.
      const failedSuites = [...module.children.allSuites()].filter(
        (suite) => suite.state() === 'failed' && ![...suite.children.allTests()].some((test) => test.result().state === 'failed'),
      ).length;
      if (failedSuites > 0) failed += failedSuites;
      else if (module.state() === 'failed' && failedTests === 0) failed += 1;
    }
    // An unhandled error fails vitest's run even when every test passed: count each one too.
    failed += unhandledErrors.length;
    process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
    if (passed + failed === 0) {
      process.stdout.write('no test ran: failing the run\n');
      process.exitCode = 1;
    }
  }
}
