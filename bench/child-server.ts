import { spawn, type ChildProcess } from 'node:child_process';

/** A started server child process whose start-up line has been seen. */
export interface ChildServer {
  child: ChildProcess;
  pid: number;
  /** The parsed JSON start-up line. */
  ready: Record<string, unknown>;
  /** Lines printed on stdout after start-up that matched `keep` (the rest is discarded). */
  kept: string[];
  stderr: () => string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves on exit. */
  stop: (graceMs?: number) => Promise<void>;
}

/** How to start a child server and recognise that it is ready. */
export interface ChildServerSpec {
  command: string;
  args: string[];
  env: Record<string, string | undefined>;
  cwd?: string;
  /** True for the stdout line (as parsed JSON) that says the server listens. */
  isReady: (line: Record<string, unknown>) => boolean;
  /** Stdout lines to keep for later inspection (e.g. sweeper log lines). */
  keep?: (line: string) => boolean;
  timeoutMs?: number;
}

/**
 * Spawns a server, waits for its JSON start-up line, and keeps draining its stdout so that a
 * chatty logger never blocks on a full pipe (which would distort every figure).
 */
export function startChildServer(spec: ChildServerSpec): Promise<ChildServer> {
  const child = spawn(spec.command, spec.args, { cwd: spec.cwd, env: spec.env, stdio: ['ignore', 'pipe', 'pipe'] });
  const kept: string[] = [];
  let stderr = '';
  let pending = '';
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  return new Promise((resolve, reject) => {
    let ready: Record<string, unknown> | undefined;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${spec.command} ${spec.args.join(' ')} did not start\n${stderr}`));
    }, spec.timeoutMs ?? 30_000);
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      // Bounded: only the tail is useful for an error message.
      stderr = (stderr + chunk).slice(-20_000);
    });
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (pending + chunk).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        if (ready === undefined && line.startsWith('{')) {
          const parsed = JSON.parse(line) as Record<string, unknown>;
          if (spec.isReady(parsed)) {
            ready = parsed;
            clearTimeout(timer);
            resolve({
              child,
              pid: child.pid ?? -1,
              ready,
              kept,
              stderr: () => stderr,
              stop: async (graceMs = 12_000) => {
                if (child.exitCode !== null || child.signalCode !== null) return;
                child.kill('SIGTERM');
                const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
                await exited;
                clearTimeout(killer);
              },
            });
            continue;
          }
        }
        if (spec.keep?.(line) === true) kept.push(line);
      }
    });
    void exited.then(() => {
      if (ready !== undefined) return;
      clearTimeout(timer);
      reject(new Error(`${spec.command} exited before it was ready (code ${child.exitCode})\n${stderr}`));
    });
  });
}
