/**
 * Preloaded into the service by bench/profile.ts (`node --import ./bench/loop-probe.ts`,
 * Node's own type stripping: no relative imports here). On every SIGUSR2 it appends one JSON
 * line to $BENCH_PROBE_OUT with what happened since the previous signal: the event-loop delay
 * histogram (perf_hooks.monitorEventLoopDelay), the main thread's CPU time and the whole
 * process's (all threads), then starts over. Without the variable it does nothing.
 */
import { appendFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

/** Sampling resolution of the delay histogram, ms: fine enough to see a 1 ms fsync stall. */
const RESOLUTION_MS = 1;

const out = process.env.BENCH_PROBE_OUT;
if (out !== undefined && out !== '') {
  const delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  delay.enable();
  let thread = process.threadCpuUsage();
  let all = process.cpuUsage();
  let since = process.hrtime.bigint();
  process.on('SIGUSR2', () => {
    const now = process.hrtime.bigint();
    const threadNow = process.threadCpuUsage();
    const allNow = process.cpuUsage();
    const ms = (ns: number) => ns / 1e6;
    appendFileSync(
      out,
      `${JSON.stringify({
        wallMs: Number(now - since) / 1e6,
        mainThreadCpuMs: (threadNow.user - thread.user + threadNow.system - thread.system) / 1000,
        processCpuMs: (allNow.user - all.user + allNow.system - all.system) / 1000,
        loopDelayMs: { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max), mean: ms(delay.mean) },
      })}\n`,
    );
    delay.reset();
    thread = threadNow;
    all = allNow;
    since = now;
  });
}
