import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import autocannon from 'autocannon';

/** One load run against an HTTP endpoint. */
export interface HttpLoad {
  url: string;
  connections: number;
  seconds: number;
  headers?: Record<string, string>;
  /** Requests per second over all connections (a fixed, moderate load); unset: as fast as possible. */
  overallRate?: number;
  /** The status every answer must have (e.g. 304); unset: any 2xx. */
  expectStatus?: number;
}

/** What one run measured. Latencies in ms. */
export interface HttpLoadResult {
  rps: number;
  p50: number;
  p99: number;
  max: number;
  /** Requests that were not answered 2xx, plus connection errors and timeouts. */
  failures: number;
}

/** Runs autocannon (programmatic API, keep-alive connections) for `seconds`. */
export function runHttpLoad(load: HttpLoad): Promise<HttpLoadResult> {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: load.url,
        connections: load.connections,
        duration: load.seconds,
        headers: load.headers,
        overallRate: load.overallRate,
        timeout: 10,
      },
      (error, result) => {
        if (error !== null) return reject(error);
        resolve({
          rps: result.requests.average,
          p50: result.latency.p50,
          p99: result.latency.p99,
          max: result.latency.max,
          failures: unexpectedAnswers(result, load.expectStatus) + result.errors + result.timeouts,
        });
      },
    );
  });
}

/** Answers that were not 2xx, or not `expectStatus` when it is given. */
function unexpectedAnswers(result: autocannon.Result, expectStatus: number | undefined): number {
  if (expectStatus === undefined) return result.non2xx;
  const expected = result.statusCodeStats[String(expectStatus)]?.count ?? 0;
  return result['2xx'] + result.non2xx - expected;
}

/**
 * The same load from autocannon's command line in a child process, for background load
 * while this process times something else; resolves when it exits.
 */
export function runHttpLoadProcess(load: HttpLoad): Promise<void> {
  const cli = createRequire(import.meta.url).resolve('autocannon/autocannon.js');
  const args = [cli, '-n', '-c', String(load.connections), '-d', String(load.seconds), ...(load.overallRate === undefined ? [] : ['-R', String(load.overallRate)])];
  for (const [name, value] of Object.entries(load.headers ?? {})) args.push('-H', `${name}=${value}`);
  const child = spawn(process.execPath, [...args, load.url], { stdio: 'ignore' });
  return new Promise((resolve) => child.once('close', () => resolve()));
}
