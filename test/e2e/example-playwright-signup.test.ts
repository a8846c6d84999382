import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killGroup, spawnTestChild } from '../helpers/child-processes.js';
import { toolAvailable, toolPath } from '../helpers/external-tools.js';
import { startServer, tempDataDir, type ServerProcess } from '../helpers/server-process.js';

/**
 * The example users copy (examples/playwright-signup): its own Playwright test, run as its
 * README says (`playwright test`), against a started tempinbox server and the machine's Chromium
 * (the first `chromium` on PATH that runs, as for the browser tests).
 */
const EXAMPLE = resolve(import.meta.dirname, '../../examples/playwright-signup');
const PLAYWRIGHT = resolve(import.meta.dirname, '../../node_modules/@playwright/test/cli.js');
/** Browser start, the app, one sign-up and its mail: well under a minute even on a loaded machine. */
const RUN_TIMEOUT_MS = 120_000;

/** A free loopback port for the example app (Playwright's webServer needs a known URL). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
  const address = server.address();
  await new Promise<void>((done) => server.close(() => done()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

const available = toolAvailable('chromium', 'examples/playwright-signup: its Playwright test');

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
      HOME: process.env.HOME ?? tmpdir(),
      TEMPINBOX_URL: server.baseUrl,
      SMTP_HOST: '127.0.0.1',
      SMTP_PORT: String(server.smtpPort),
      APP_PORT: String(await freePort()),
      PLAYWRIGHT_OUTPUT_DIR: output,
      // The chromium that passed the check (playwright.config.ts reads it).
      CHROMIUM_PATH: toolPath('chromium'),
      CI: '1',
    };
    // Its own process group: the browser and the example app that Playwright starts go with it.
    const child = spawnTestChild(process.execPath, [PLAYWRIGHT, 'test'], { cwd: EXAMPLE, env });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    const timer = setTimeout(() => killGroup(child), RUN_TIMEOUT_MS);
    const code = await new Promise<number | null>((done) => child.once('close', done));
    clearTimeout(timer);
    expect(code, out).toBe(0);
    expect(out).toMatch(/1 passed/);
  }, RUN_TIMEOUT_MS + 10_000);
});
