import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLoopbackDnsServer, type LoopbackDnsServer } from '../support/loopback-dns-server.js';
import { ROOT } from './service-process.js';

/** The peer's own folder: its package.json and lockfile are committed, its node_modules is not. */
const PEER_DIR = join(ROOT, 'bench', 'peers', 'maildev');
/** MailDev's command-line entry point inside that folder. */
const MAILDEV_BIN = join(PEER_DIR, 'node_modules', 'maildev', 'dist', 'bin', 'maildev.js');
/** How long MailDev may take to answer its health check after it was spawned. */
const START_TIMEOUT_MS = 30_000;
/** How long a stopped MailDev may take to exit before it is killed. */
const STOP_GRACE_MS = 5_000;
/** Each API call of the bench (clear, count) is answered within this, or the figure fails. */
const API_TIMEOUT_MS = 30_000;
/** Tail of MailDev's output kept for an error message (it prints two lines per message). */
const KEPT_OUTPUT_CHARS = 4_000;

/** A running MailDev, as the benchmark drives it. */
export interface MailDevPeer {
  pid: number;
  version: string;
  smtpPort: number;
  /** Its web server: the REST API (`/api/email`) and the UI. */
  baseUrl: string;
  /** The loopback DNS server its node:dns asks (bench/peer-dns-preload.ts): its reverse lookups of clients. */
  dns: LoopbackDnsServer;
  /** Deletes every message it holds (`DELETE /api/email/all`). */
  clear(): Promise<void>;
  /** Messages it holds. */
  count(): Promise<number>;
  stop(): Promise<void>;
}

/** The MailDev version the peer's lockfile pins. */
function pinnedVersion(): string {
  const lock = JSON.parse(readFileSync(join(PEER_DIR, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string }> };
  return lock.packages['node_modules/maildev']?.version ?? 'unknown';
}

/**
 * Installs MailDev into bench/peers/maildev/node_modules with `npm ci` from its own lockfile
 * when it is missing or another version, never into the product's dependencies. Install
 * scripts are not run: none of its packages needs one.
 */
export function ensureMailDev(): string {
  const version = pinnedVersion();
  const installed = join(PEER_DIR, 'node_modules', 'maildev', 'package.json');
  if (existsSync(installed) && (JSON.parse(readFileSync(installed, 'utf8')) as { version: string }).version === version) return version;
  console.error(`bench: installing MailDev ${version} into bench/peers/maildev (npm ci, its own lockfile)`);
  execFileSync('npm', ['ci', '--prefix', PEER_DIR, '--ignore-scripts', '--no-audit', '--no-fund'], { stdio: ['ignore', 'ignore', 'inherit'] });
  return version;
}

/** A TCP port free on loopback right now (MailDev wants its ports named; it cannot take 0). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** A fetch that fails after API_TIMEOUT_MS, and on any answer but 2xx. */
async function call(url: string, method = 'GET'): Promise<unknown> {
  const response = await fetch(url, { method, signal: AbortSignal.timeout(API_TIMEOUT_MS) });
  const text = await response.text();
  if (!response.ok) throw new Error(`MailDev ${method} ${url} answered ${response.status}: ${text.slice(0, 200)}`);
  return JSON.parse(text) as unknown;
}

/**
 * Starts MailDev as its users do (`maildev`, everything at its defaults: mail kept in memory,
 * each message also written to a `.eml` file under $TMPDIR/maildev, a log line per message),
 * on loopback ports of its own, under the same Node as the service. Its $TMPDIR, working
 * directory and configuration file (an empty one, so that no file of the machine's is found)
 * are a fresh folder, and node:dns asks a loopback DNS server of its own
 * (bench/peer-dns-preload.ts): nothing it does leaves loopback.
 */
export async function startMailDev(): Promise<MailDevPeer> {
  const version = ensureMailDev();
  const dns = await startLoopbackDnsServer({});
  const dir = mkdtempSync(join(tmpdir(), 'tempinbox-bench-maildev-'));
  const config = join(dir, '.maildevrc.json');
  writeFileSync(config, '{}\n');
  const ports = await Promise.all([freePort(), freePort()]).catch(async (error: unknown) => {
    await dns.close();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  });
  const [smtpPort, webPort] = ports;
  const args = ['--smtp', String(smtpPort), '--ip', '127.0.0.1', '--web', String(webPort), '--web-ip', '127.0.0.1', '--config', config];
  const child = spawn(process.execPath, ['--import', join(ROOT, 'bench', 'peer-dns-preload.ts'), MAILDEV_BIN, ...args], {
    cwd: dir,
    env: { PATH: process.env.PATH, TMPDIR: dir, NODE_ENV: 'production', BENCH_DNS_SERVER: dns.address },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Drained, so that its log never blocks it on a full pipe; only the tail is kept.
  let output = '';
  const keep = (chunk: string): void => void (output = (output + chunk).slice(-KEPT_OUTPUT_CHARS));
  child.stdout.setEncoding('utf8').on('data', keep);
  child.stderr.setEncoding('utf8').on('data', keep);
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const baseUrl = `http://127.0.0.1:${webPort}`;
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(killer);
    }
    await dns.close();
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) break;
    try {
      if ((await call(`${baseUrl}/api/healthz`)) === true) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) break;
    await new Promise((done) => setTimeout(done, 100));
  }
  if (child.exitCode !== null || Date.now() > deadline) {
    await stop();
    throw new Error(`MailDev ${version} did not start:\n${output}`);
  }
  return {
    pid: child.pid ?? -1,
    version,
    smtpPort,
    baseUrl,
    dns,
    clear: async () => void (await call(`${baseUrl}/api/email/all`, 'DELETE')),
    count: async () => Number(((await call(`${baseUrl}/api/email/summary?limit=1`)) as { storeTotal?: number; total?: number }).storeTotal ?? Number.NaN),
    stop,
  };
}
