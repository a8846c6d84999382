import { readdirSync } from 'node:fs';
import { PerformanceObserver, constants, monitorEventLoopDelay, type PerformanceEntry } from 'node:perf_hooks';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/**
 * How often the event-loop delay is sampled (ms): prom-client's default precision, fine
 * enough to see the 100 ms stalls docs/architecture.md budgets against.
 */
const EVENT_LOOP_RESOLUTION_MS = 10;

/** GC pause buckets (seconds), prom-client's defaults: minor GCs are sub-ms, a full one can take seconds. */
const GC_BUCKETS = [0.001, 0.01, 0.1, 1, 2, 5];

const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

/** Collectors that run between scrapes; stop() ends them. */
export interface ProcessMetrics {
  stop(): void;
}

/** Open file descriptors (Linux; null elsewhere): each SMTP or HTTP connection holds one. */
function openFds(): number | null {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return null;
  }
}

/**
 * The process metrics of prom-client's collectDefaultMetrics, same names, but with the two
 * collectors that run between scrapes (the event-loop delay monitor and the GC observer)
 * owned here, so that stop() ends them: prom-client offers no way to, and every app
 * instance (tests make many) would otherwise leave both running for the process's life.
 */
export function registerProcessMetrics(registry: Registry, prefix: string): ProcessMetrics {
  const registers = [registry];
  const loopDelay = monitorEventLoopDelay({ resolution: EVENT_LOOP_RESOLUTION_MS });
  loopDelay.enable();
  const gcSeconds = new Histogram({
    name: `${prefix}nodejs_gc_duration_seconds`,
    help: 'Garbage collection duration by kind, one of major, minor, incremental or weakcb.',
    labelNames: ['kind'] as const,
    buckets: GC_BUCKETS,
    registers,
  });
  const gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries() as Array<PerformanceEntry & { detail?: { kind?: number } }>) {
      gcSeconds.observe({ kind: GC_KINDS[entry.detail?.kind ?? -1] ?? 'unknown' }, entry.duration / 1000);
    }
  });
  gcObserver.observe({ entryTypes: ['gc'] });

  let lastCpu = process.cpuUsage();
  const cpuUser = new Counter({ name: `${prefix}process_cpu_user_seconds_total`, help: 'User CPU time spent in seconds.', registers });
  const cpuSystem = new Counter({ name: `${prefix}process_cpu_system_seconds_total`, help: 'System CPU time spent in seconds.', registers });
  new Counter({
    name: `${prefix}process_cpu_seconds_total`,
    help: 'Total user and system CPU time spent in seconds.',
    registers,
    collect() {
      const now = process.cpuUsage();
      const user = (now.user - lastCpu.user) / 1e6;
      const system = (now.system - lastCpu.system) / 1e6;
      lastCpu = now;
      cpuUser.inc(user);
      cpuSystem.inc(system);
      this.inc(user + system);
    },
  });
  const gauge = (name: string, help: string, value: () => number | null): void => {
    new Gauge({
      name: `${prefix}${name}`,
      help,
      registers,
      collect() {
        const current = value();
        if (current !== null) this.set(current);
      },
    });
  };
  const startSeconds = Math.round(Date.now() / 1000 - process.uptime());
  gauge('process_start_time_seconds', 'Start time of the process since unix epoch in seconds.', () => startSeconds);
  gauge('process_resident_memory_bytes', 'Resident memory size in bytes.', () => process.memoryUsage.rss());
  gauge('process_open_fds', 'Number of open file descriptors.', openFds);
  gauge('nodejs_heap_size_total_bytes', 'Process heap size from Node.js in bytes.', () => process.memoryUsage().heapTotal);
  gauge('nodejs_heap_size_used_bytes', 'Process heap size used from Node.js in bytes.', () => process.memoryUsage().heapUsed);
  gauge('nodejs_external_memory_bytes', 'Node.js external memory size in bytes.', () => process.memoryUsage().external);
  gauge('nodejs_active_resources_total', 'Number of active resources keeping the event loop alive.', () => process.getActiveResourcesInfo().length);
  // Event-loop delay since the previous scrape. The samples gauge is registered first, and a
  // scrape collects in registration order: its collect sets the others, then resets the
  // histogram (prom-client's own eventLoopLag works the same way).
  const delays = new Map<'min' | 'max' | 'mean' | 'p50' | 'p90' | 'p99', Gauge>();
  new Gauge({
    name: `${prefix}nodejs_eventloop_lag_samples`,
    help: 'Event loop delay samples taken since the last scrape.',
    registers,
    collect() {
      const sampled = loopDelay.count > 0;
      const values = {
        min: loopDelay.min, max: loopDelay.max, mean: loopDelay.mean,
        p50: loopDelay.percentile(50), p90: loopDelay.percentile(90), p99: loopDelay.percentile(99),
      };
      this.set(loopDelay.count);
      for (const [name, delay] of delays) delay.set(sampled ? values[name] / 1e9 : 0);
      loopDelay.reset();
    },
  });
  for (const name of ['min', 'max', 'mean', 'p50', 'p90', 'p99'] as const) {
    const help = `The ${name} of the event loop delay since the last scrape, in seconds.`;
    delays.set(name, new Gauge({ name: `${prefix}nodejs_eventloop_lag_${name}_seconds`, help, registers }));
  }

  return {
    stop() {
      loopDelay.disable();
      gcObserver.disconnect();
    },
  };
}
