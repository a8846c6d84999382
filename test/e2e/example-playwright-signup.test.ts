import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, tempDataDir, type ServerProcess } from '../helpers/server-process.js';

/**
 * The example users copy (examples/playwright-signup): its own Playwright test, run as its
 * README says (`playwright test`), against a started tempinbox server and Debian's Chromium.
 */
const EXAMPLE = resolve(import.meta.dirname, '../../examples/playwright-signup');
const PLAYWRIGHT = resolve(import.meta.dirname, '../../node_modules/@playwright/test/cli.js');
const CHROMIUM = '/usr/bin/chromium';
/** Browser start, the app, one sign-up and its mail: well under a minute even on a loaded machine. */
const RUN_TIMEOUT_MS = 120_000;

/** Whether Chromium is there; in CI (TEMPINBOX_REQUIRE_TOOLS=1) its absence fails the file. */
function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  const message = `Example Playwright test skipped: ${CHROMIUM} not found (apt-get install chromium).`;
  if (process.env.TEMPINBOX_REQUIRE_TOOLS === '1') throw new Error(`${message.replace('skipped', 'FAILED')} TEMPINBOX_REQUIRE_TOOLS=1 requires it.`);
  console.warn(message);
  return false;
}

/** A free loopback port for the example app (Playwright's webServer needs a known URL). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
  const address = server.address();
  await new Promise<void>((done) => server.close(() => done()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

const available = chromiumAvailable();

describe.skipIf(!available)('examples/playwright-signup', () => {
  let server: ServerProcess;
  const data = tempDataDir();
  const output = mkdtempSync(join(tmpdir(), 'tempinbox-example-'));

  beforeAll(async () => {
    server = await startServer({ DATABASE_URL: data.databaseUrl });
  });
  afterAll(async () => {
    await server?.stop();
    data.cleanup();
    rmSync(output, { recursive: true, force: true });
  });

  it('signs up in Chromium with the code read by waitForCode', async () => {
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? tmpdir(),
      TEMPINBOX_URL: server.baseUrl,
      SMTP_HOST: '127.0.0.1',
      SMTP_PORT: String(server.smtpPort),
      APP_PORT: String(await freePort()),
      PLAYWRIGHT_OUTPUT_DIR: output,
      CI: '1',
    };
    const child = spawn(process.execPath, [PLAYWRIGHT, 'test'], { cwd: EXAMPLE, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
    const code = await new Promise<number | null>((done) => child.once('close', done));
    clearTimeout(timer);
    expect(code, out).toBe(0);
    expect(out).toMatch(/1 passed/);
  }, RUN_TIMEOUT_MS + 10_000);
});
