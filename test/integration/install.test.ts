import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';

const require = createRequire(import.meta.url);

describe('install', () => {
  it('uses the SQLite binding prebuilt inside the npm package: nothing was compiled on install', () => {
    // package.json's allowScripts denies better-sqlite3's implicit `node-gyp rebuild`, so npm ci
    // needs no compiler (docs/development.md#node-versions). A compiled copy would sit in build/.
    const packageDir = dirname(require.resolve('better-sqlite3/package.json'));
    expect(existsSync(join(packageDir, 'build'))).toBe(false);
    expect(existsSync(join(packageDir, 'prebuilds', `${process.platform}-${process.arch}.node`))).toBe(true);
    const Database = require('better-sqlite3') as new (path: string) => { prepare(sql: string): { get(): unknown }; close(): void };
    const db = new Database(':memory:');
    expect(db.prepare('select 41 + 1 as answer').get()).toEqual({ answer: 42 });
    db.close();
  });
});
