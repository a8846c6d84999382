import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SERVICE_NODE_FLAGS } from './runtime-flags.js';

const ROOT = resolve(import.meta.dirname, '..');

describe('the service is started with SERVICE_NODE_FLAGS', () => {
  it('by npm start', () => {
    const pkg = JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
    expect(pkg.scripts.start).toBe(`exec node ${SERVICE_NODE_FLAGS.join(' ')} dist/main.js serve`);
  });

  it('by bin/tempinbox', () => {
    const shebang = readFileSync(resolve(ROOT, 'bin/tempinbox'), 'utf8').split('\n')[0];
    expect(shebang).toBe(`#!/usr/bin/env -S node ${SERVICE_NODE_FLAGS.join(' ')}`);
  });
});
