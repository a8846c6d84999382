import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startLoopbackDnsServer, type LoopbackDnsServer } from '../support/loopback-dns-server.js';
import { benchSenderZone } from './bench-sender.js';
import { startChildServer, type ChildServer } from './child-server.js';
import { SERVICE_NODE_FLAGS } from '../src/runtime-flags.js';

/** The repository root (bench/ lives in it). */
export const ROOT = resolve(import.meta.dirname, '..');
/** The entry point `npm start` runs. */
const MAIN = join(ROOT, 'dist', 'main.js');

/** A running `tempinbox serve`. */
export interface ServiceProcess {
  server: ChildServer;
  pid: number;
  httpPort: number;
  smtpPort: number;
  baseUrl: string;
  /** The resolver its sender checks ask (DNS_SERVERS), serving the bench sender's records. */
  dns: LoopbackDnsServer;
}

/** Newest modification time of any file under `dir`, in ms. */
function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * Compiles the server into dist/ (the server half of `npm run build`; the web bundle is not
 * measured) when it is missing or older than src/: we measure what users run.
 */
export function ensureBuilt(): void {
  if (existsSync(MAIN) && statSync(MAIN).mtimeMs >= newestMtime(join(ROOT, 'src'))) return;
  console.error('bench: compiling the server into dist/ (tsc -p tsconfig.build.json)');
  execFileSync(join(ROOT, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
}

/** Applies the migrations to a database, as `tempinbox migrate` does (used before bulk loading). */
export function migrate(databaseUrl: string): void {
  execFileSync(process.execPath, [MAIN, 'migrate'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/**
 * Starts the service the way users do (`node dist/main.js serve`, what `npm start` execs),
 * on free loopback ports with RATE_LIMITS=off, and reads the real ports from its
 * `"msg":"listening"` line. Default LOG_LEVEL (info): the per-message log line is part of
 * what users pay for; default MAIL_AUTH (on), with DNS_SERVERS pointing at a DNS server of
 * its own on loopback that serves the bench sender's SPF, DKIM and DMARC records
 * (bench/bench-sender.ts), so the checks run as they do for real mail, not against a
 * resolver that answers nothing. Stopping the server stops that DNS server too.
 */
export async function startService(
  databaseUrl: string,
  env: Record<string, string> = {},
  keep?: (line: string) => boolean,
  nodeArgs: string[] = [],
): Promise<ServiceProcess> {
  const dns = await startLoopbackDnsServer(benchSenderZone());
  const child = await startChildServer({
    command: process.execPath,
    // With the node flags npm start passes (src/runtime-flags.ts).
    args: [...SERVICE_NODE_FLAGS, ...nodeArgs, MAIN, 'serve'],
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      PORT: '0',
      SMTP_PORT: '0',
      HOST: '127.0.0.1',
      RATE_LIMITS: 'off',
      DATABASE_URL: databaseUrl,
      DNS_SERVERS: dns.address,
      ...env,
    },
    isReady: (line) => line.msg === 'listening',
    keep,
    timeoutMs: 120_000,
  }).catch(async (error: unknown) => {
    await dns.close();
    throw error;
  });
  const server: ChildServer = {
    ...child,
    stop: async (graceMs) => {
      try {
        await child.stop(graceMs);
      } finally {
        await dns.close();
      }
    },
  };
  const httpPort = Number(server.ready.http_port);
  const smtpPort = Number(server.ready.smtp_port);
  return { server, pid: server.pid, httpPort, smtpPort, baseUrl: `http://127.0.0.1:${httpPort}`, dns };
}
