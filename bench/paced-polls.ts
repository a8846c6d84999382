import { Agent, request } from 'node:http';

/** A steady, moderate request load and what each request took. */
export interface PacedLoad {
  url: string;
  headers?: Record<string, string>;
  /** Requests per second over all clients. */
  rate: number;
  /** Concurrent clients (keep-alive connections). */
  clients: number;
  /** Stops issuing new requests once this returns true. */
  done: () => boolean;
}

/** Every request: when it was sent (epoch ms) and what it took (ms); and how many failed. */
export interface PacedResult {
  samples: Array<{ at: number; ms: number }>;
  failures: number;
}

/**
 * Sends requests at a fixed pace and times each from send to the end of the response.
 * autocannon's own rate limiting sends in bursts and corrects for coordinated omission, which
 * put p99 near 30 ms even on the bare node:http floor at 200 requests/s; a worst-case figure
 * at a moderate load needs the time of each request itself.
 */
export async function runPacedLoad(load: PacedLoad): Promise<PacedResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: load.clients });
  const samples: PacedResult['samples'] = [];
  let failures = 0;
  const interval = (1000 * load.clients) / load.rate;
  const client = async (offset: number): Promise<void> => {
    let next = performance.now() + offset;
    while (!load.done()) {
      const wait = next - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      next += interval;
      const at = Date.now();
      const started = performance.now();
      const ok = await get(agent, load.url, load.headers ?? {});
      samples.push({ at, ms: performance.now() - started });
      if (!ok) failures += 1;
    }
  };
  await Promise.all(Array.from({ length: load.clients }, (_, i) => client((i * interval) / load.clients)));
  agent.destroy();
  return { samples, failures };
}

/** One GET, the body read to the end; true for a 2xx. */
function get(agent: Agent, url: string, headers: Record<string, string>): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request(url, { agent, headers }, (response) => {
      response.on('data', () => undefined);
      response.once('end', () => resolve((response.statusCode ?? 0) >= 200 && (response.statusCode ?? 0) < 300));
      response.once('error', () => resolve(false));
    });
    req.once('error', () => resolve(false));
    req.setTimeout(10_000, () => req.destroy());
    req.end();
  });
}
