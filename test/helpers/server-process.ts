import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SERVICE_NODE_FLAGS } from '../../src/runtime-flags.js';
import { killGroup, spawnTestChild, stopChild, waitForExit, type TestChild } from './child-processes.js';

/** The built entry point users start with `npm start` (npm test builds it first). */
export const MAIN = resolve(import.meta.dirname, '../../dist/main.js');
export const BIN = resolve(import.meta.dirname, '../../bin/tempinbox');

/** A started `tempinbox serve` process on free ports. */
export interface ServerProcess {
  child: TestChild;
  httpPort: number;
  smtpPort: number;
  baseUrl: string;
  /** Everything the process printed on stdout so far. */
  stdout: () => string;
  stderr: () => string;
  /** SIGTERM and wait for the exit code; past STOP_GRACE_MS its process group is killed and it resolves null. */
  stop: () => Promise<number | null>;
  /** SIGKILL (no chance to flush or drain) and wait. */
  kill9: () => Promise<void>;
}

/** A temporary folder for a SQLite file; removed by the returned cleanup. */
export function tempDataDir(): { dir: string; databaseUrl: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'tempinbox-e2e-'));
  return { dir, databaseUrl: `sqlite:${join(dir, 'tempinbox.db')}`, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * Starts the program as users do, on port 0 for both listeners, and waits for the
 * `"msg":"listening"` line to learn the real ports. Fails after `timeoutMs`. The process is in
 * a group of its own and stopped at the end of the test file if the file does not stop it
 * (test/helpers/child-processes.ts).
 */
export async function startServer(env: Record<string, string>, timeoutMs = 15_000): Promise<ServerProcess> {
  // With the node flags npm start passes (src/runtime-flags.ts).
  const child = spawnTestChild(process.execPath, [...SERVICE_NODE_FLAGS, MAIN, 'serve'], {
    // MAIL_AUTH off unless a test asks: the sender checks would ask the system's DNS, and no
    // test may depend on the network (test/e2e/sender-auth.test.ts serves its own DNS).
    env: { PORT: '0', SMTP_PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', MAIL_AUTH: 'off', ...env },
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));

  const ports = await new Promise<{ httpPort: number; smtpPort: number }>((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`server did not start in ${timeoutMs} ms\nstdout: ${out}\nstderr: ${err}`)), timeoutMs);
    const onData = () => {
      for (const line of out.split('\n')) {
        if (!line.includes('"msg":"listening"')) continue;
        const parsed = JSON.parse(line) as { http_port: number; smtp_port: number };
        clearTimeout(timer);
        child.stdout.off('data', onData);
        done({ httpPort: parsed.http_port, smtpPort: parsed.smtp_port });
        return;
      }
    };
    child.stdout.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      fail(new Error(`server exited with ${code} before listening\nstdout: ${out}\nstderr: ${err}`));
    });
  });

  return {
    child,
    ...ports,
    baseUrl: `http://127.0.0.1:${ports.httpPort}`,
    stdout: () => out,
    stderr: () => err,
    stop: () => stopChild(child),
    kill9: async () => {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Runs the CLI to completion: exit code, stdout, stderr. Past `timeoutMs` its process group is killed (code null). */
export async function runBin(args: string[], env: Record<string, string>, timeoutMs = 20_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnTestChild(process.execPath, [BIN, ...args], { env });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  let code = await waitForExit(child, timeoutMs);
  if (code === undefined) {
    killGroup(child);
    code = (await waitForExit(child, timeoutMs)) ?? null;
  }
  return { code, stdout, stderr };
}
