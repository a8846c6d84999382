/** The part of autocannon 9's programmatic API the benchmark uses (it ships no types). */
declare module 'autocannon' {
  interface Histogram {
    average: number;
    mean: number;
    max: number;
    min: number;
    p50: number;
    p90: number;
    p99: number;
    total: number;
  }
  interface Options {
    url: string;
    connections?: number;
    duration?: number;
    amount?: number;
    overallRate?: number;
    headers?: Record<string, string>;
    timeout?: number;
  }
  interface Result {
    requests: Histogram;
    latency: Histogram;
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
    /** Answers per status code, e.g. { '304': { count: 5 } }. */
    statusCodeStats: Record<string, { count: number } | undefined>;
  }
  interface Instance {
    stop(): void;
  }
  namespace autocannon {
    export type { Result };
  }
  function autocannon(options: Options, callback: (error: Error | null, result: Result) => void): Instance;
  // CommonJS: module.exports = autocannon (imported as a default through esModuleInterop).
  export = autocannon;
}
