/**
 * `npx tsx bench/live-streams.ts [--clients N] [--rate R] [--seconds S] [--mode sse|wait]
 * [--env NAME=value]… [--node-arg --flag]…`: one measurement of figure 8 (live mail, one node,
 * SQLite) outside `npm run bench`, printed as JSON: N held clients, 10 per inbox, R messages/s
 * over SMTP for S seconds (see bench/live-measure.ts). `--node-arg` passes flags to the
 * server's node (e.g. `--heapsnapshot-signal=SIGUSR2`); with `--hold` the run stops with
 * every client open until Enter is pressed (for heap snapshots and /proc inspection).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { measureLive } from './live-measure.js';
import { ensureBuilt, startService } from './service-process.js';

const argv = process.argv.slice(2);
function arg(name: string, fallback: string): string {
  const at = argv.indexOf(`--${name}`);
  return at === -1 ? fallback : (argv[at + 1] ?? fallback);
}
function all(name: string): string[] {
  return argv.flatMap((value, i) => (value === `--${name}` ? [argv[i + 1] ?? ''] : []));
}

ensureBuilt();
const dir = mkdtempSync(join(tmpdir(), 'tempinbox-live-bench-'));
const env = Object.fromEntries(all('env').map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
const service = await startService(`sqlite:${join(dir, 'db.sqlite')}`, env, undefined, all('node-arg'));
try {
  const node = { pid: service.pid, baseUrl: service.baseUrl, smtpPort: service.smtpPort };
  const mode = arg('mode', 'sse') === 'wait' ? 'wait' : 'sse';
  const hold = async (): Promise<void> => {
    console.error(`every client open on server pid ${service.pid}; press Enter to send`);
    await new Promise((resolve) => createInterface({ input: process.stdin }).once('line', resolve));
  };
  const result = await measureLive({
    mode,
    clients: Number(arg('clients', '2000')),
    rate: Number(arg('rate', '100')),
    seconds: Number(arg('seconds', '10')),
    clientNode: node,
    smtpNode: node,
    onOpen: argv.includes('--hold') ? hold : undefined,
  });
  console.log(JSON.stringify({ mode, ...result }));
} catch (error) {
  console.error(`server exit ${service.server.child.exitCode} signal ${service.server.child.signalCode}; stderr: ${service.server.stderr()}`);
  throw error;
} finally {
  await service.server.stop();
  rmSync(dir, { recursive: true, force: true });
}
