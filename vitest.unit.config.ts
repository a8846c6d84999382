import { configDefaults, defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

/**
 * The fast tier (`npm run test:unit`): the tests beside the code in src/ and web/src, and the
 * store contract suite on the in-memory fake. None opens a socket or starts a process. Left
 * out, and run only by the whole suite (`npm test`): the tests beside the code whose subject
 * is a worker thread (the parse pool, the SQLite store's
 * writer): they start, crash and idle out real threads, which takes most of the src/ tests' time.
 */
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: ['src/**/*.test.ts', 'web/src/**/*.test.ts', 'test/contract/memory-mail-store.test.ts'],
    exclude: [
      ...configDefaults.exclude,
      // The parse pool's worker threads, their crashes and their idle timeout.
      'src/mail/worker-mail-parser.test.ts',
      'src/mail/worker-mail-parser-lifecycle.test.ts',
      // The SQLite store, whose writer is a worker thread, over files and in memory.
      'src/storage/sql/sqlite-group-commit.test.ts',
      'src/storage/sql/sqlite-worker-driver.test.ts',
      'src/storage/sql/sweep-steps.test.ts',
    ],
  },
});
