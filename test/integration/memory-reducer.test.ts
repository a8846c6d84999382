import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { SERVICE_NODE_FLAGS } from '../../src/runtime-flags.js';

/**
 * src/runtime-memory-reducer.ts in a process of its own: a burst of allocation, then idle.
 * V8's memory reducer must run a memory-reducing collection and give the burst's pages back
 * (docs/architecture.md "Memory"). On Node 24 without the nudge the RSS stays at its peak
 * until V8's 100 s watchdog (measured: 355 MB for 45 s, against 64 MB after 8.5 s with it).
 */

const MODULE = pathToFileURL(resolve(import.meta.dirname, '../../dist/runtime-memory-reducer.js')).href;

/** How long the idle process may take to give the memory back (s): 8.5 s measured on Node 24. */
const GIVE_BACK_LIMIT_S = 40;

/**
 * The nudge is for V8 13 and later (Node 24). V8 12 (Node 22) reads a zero C++-heap rate as
 * idle already; when its reducer starts there depends on its slower averaging of the other
 * rates (32 s measured for this child), which the nudge does not change: nothing of ours to test.
 */
const V8_MAJOR = Number(process.versions.v8.split('.')[0]);

/**
 * The child: nudges, allocates ~60 x 50,000 small objects keeping the last 30 batches alive
 * (a few hundred MB of heap at the peak), drops them, then idles and prints its RSS once it
 * has fallen below half of the peak or the limit has passed.
 */
const CHILD = `
const { keepMemoryReducerAwake } = await import(${JSON.stringify(MODULE)});
keepMemoryReducerAwake();
let keep = [];
for (let round = 0; round < 60; round += 1) {
  const batch = [];
  for (let i = 0; i < 50_000; i += 1) batch.push({ i, text: 'item ' + round + ' ' + i });
  keep.push(batch);
  if (keep.length > 30) keep.shift();
}
keep = null;
const peak = process.memoryUsage().rss;
const started = performance.now();
setInterval(() => {
  const rss = process.memoryUsage().rss;
  const seconds = (performance.now() - started) / 1000;
  if (rss < peak / 2 || seconds > ${GIVE_BACK_LIMIT_S}) {
    console.log(JSON.stringify({ peak, rss, seconds }));
    process.exit(0);
  }
}, 500);
`;

describe('the memory reducer nudge', () => {
  it.skipIf(V8_MAJOR < 13)(
    'lets an idle process give the memory of a burst back within seconds',
    async () => {
      const { stdout } = await promisify(execFile)(process.execPath, [...SERVICE_NODE_FLAGS, '--input-type=module', '-e', CHILD], {
        timeout: (GIVE_BACK_LIMIT_S + 20) * 1000,
      });
      const { peak, rss, seconds } = JSON.parse(stdout) as { peak: number; rss: number; seconds: number };
      expect(peak).toBeGreaterThan(200 * 2 ** 20);
      expect(rss, `RSS ${Math.round(rss / 2 ** 20)} MB after ${seconds} s idle, peak ${Math.round(peak / 2 ** 20)} MB`).toBeLessThan(peak / 2);
    },
    (GIVE_BACK_LIMIT_S + 30) * 1000,
  );
});
