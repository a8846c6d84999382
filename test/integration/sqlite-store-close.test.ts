import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { spawnTestChild, waitForExit } from '../helpers/child-processes.js';

const STORE = pathToFileURL(resolve(import.meta.dirname, '../../dist/storage/sql/sqlite-store.js')).href;

describe('SQLite store close', () => {
  // A process that opens a store and closes it unused (a script that renders the OpenAPI
  // document, a CLI command that fails its checks) must end by itself: the writer thread is
  // ended by close() even when no statement ever ran through it.
  it('ends its writer thread when closed without ever being used, so the process exits', async () => {
    // A file, not `-e`: a worker thread inherits the parent's flags, `-e` among them.
    const dir = mkdtempSync(join(tmpdir(), 'tempinbox-close-'));
    const script = join(dir, 'close-unused.mjs');
    writeFileSync(script, `const { createSqliteStore } = await import(${JSON.stringify(STORE)});
      const store = createSqliteStore(':memory:');
      await store.close();`);
    const child = spawnTestChild(process.execPath, [script], { env: {} });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const code = await waitForExit(child, 15_000);
    if (code === undefined) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    expect(stderr).toBe('');
    expect(code).toBe(0);
  }, 20_000);
});
