import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { Metrics } from './metrics.js';

/** Blocks the event loop, as a stall would. */
function block(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // Spinning on purpose.
  }
}

function sample(body: string, name: string): number {
  const line = body.split('\n').find((text) => text.startsWith(`${name} `));
  return Number(line?.split(' ')[1] ?? Number.NaN);
}

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A full garbage collection, as if run with --expose-gc. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

describe('Metrics process collectors', () => {
  it('report the process and Node.js metrics under the tempinbox_ prefix', async () => {
    const metrics = new Metrics();
    try {
      const { body } = await metrics.render();
      for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_p99_seconds']) {
        expect(sample(body, `tempinbox_${name}`), name).toBeGreaterThanOrEqual(0);
      }
      expect(sample(body, 'tempinbox_process_resident_memory_bytes')).toBeGreaterThan(0);
    } finally {
      metrics.stop();
    }
  });

  it('measure event-loop stalls and GC while running, and sample nothing after stop()', async () => {
    const metrics = new Metrics();
    await metrics.render();
    await tick(50);
    block(300);
    await tick(50);
    collectGarbage();
    await tick(50);
    const running = (await metrics.render()).body;
    expect(sample(running, 'tempinbox_nodejs_eventloop_lag_max_seconds')).toBeGreaterThan(0.2);
    const gcBefore = sample(running, 'tempinbox_nodejs_gc_duration_seconds_count{kind="major"}');
    expect(gcBefore).toBeGreaterThan(0);

    metrics.stop();
    await metrics.render();
    block(300);
    await tick(50);
    collectGarbage();
    await tick(50);
    const stopped = (await metrics.render()).body;
    expect(sample(stopped, 'tempinbox_nodejs_eventloop_lag_samples')).toBe(0);
    expect(sample(stopped, 'tempinbox_nodejs_eventloop_lag_max_seconds')).toBe(0);
    expect(sample(stopped, 'tempinbox_nodejs_gc_duration_seconds_count{kind="major"}')).toBe(gcBefore);
  });
});
