import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { childEnv } from '../helpers/child-processes.js';
import { MAIN } from '../helpers/server-process.js';

/**
 * An older Node.js that happens to be on the machine (Debian's images ship Node 20 at
 * /usr/bin/node; CI runs the suite itself on Node 24 and 22 from the npm registry).
 */
function findOldNode(): string | undefined {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) {
    if (!existsSync(candidate) || resolve(candidate) === process.execPath) continue;
    const version = execFileSync(candidate, ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
    const [major = 0, minor = 0] = version.split('.').map(Number);
    if (major < 22 || (major === 22 && minor < 19)) return candidate;
  }
  return undefined;
}

const oldNode = findOldNode();

describe('start on an unsupported Node.js', () => {
  // Needs an old Node binary beside the one running the suite; the version logic itself is
  // unit-tested in src/runtime-check.test.ts on every machine.
  it.skipIf(oldNode === undefined)('exits 1 at once with one line naming the version needed, no stack trace', () => {
    const started = Date.now();
    const result = spawnSync(oldNode ?? 'node', [MAIN, 'serve'], {
      // childEnv: marked as this run's, so a start that wrongly went on to serve is caught at the end.
      env: childEnv({ PORT: '0', SMTP_PORT: '0', DATABASE_URL: 'sqlite::memory:' }),
      encoding: 'utf8',
      timeout: 15_000,
    });
    expect(result.status).toBe(1);
    expect(Date.now() - started).toBeLessThan(5_000);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^tempinbox needs Node\.js 22\.19 or later \(24 LTS recommended\); this is Node\.js 2\d\.\d+\.\d+$/);
    expect(result.stdout).toBe('');
  });
});
