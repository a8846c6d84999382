import { execFile } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, spawnTestChild } from '../../../test/helpers/child-processes.js';
import { deliver, startKitServer, type KitServer } from '../../client/test/kit-server.js';

const run = promisify(execFile);
const PACKAGES = resolve(import.meta.dirname, '../..');
/**
 * npm pack packs the dist/ that `npm test` built (--ignore-scripts: its prepack would rebuild
 * dist/ under the feet of the CLI and MCP tests running beside this one); npm install fetches
 * only the MCP SDK and zod from the registry.
 */
const NPM_TIMEOUT_MS = 180_000;

/** What a user writes: the library from the installed tarball, nothing of this repository. */
const USER_SCRIPT = `
import { TempInboxClient, WaitTimeoutError } from '@tempinbox/client';
const client = new TempInboxClient();
const inbox = await client.createInbox();
console.log(inbox.address);
const { code } = await inbox.waitForCode({ timeout: 20000 });
console.log(code);
console.log(typeof WaitTimeoutError);
`;

describe('the packed tarballs, installed in an empty folder as a user would', () => {
  let kit: KitServer;
  let work: string;
  let app: string;

  beforeAll(async () => {
    kit = await startKitServer({ RATE_LIMITS: 'off' });
    work = mkdtempSync(join(tmpdir(), 'tempinbox-packed-'));
    const tarballs = join(work, 'tarballs');
    app = join(work, 'app');
    mkdirSync(tarballs);
    mkdirSync(app);
    for (const name of ['client', 'mcp']) {
      await run('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', tarballs], { cwd: join(PACKAGES, name), timeout: NPM_TIMEOUT_MS });
    }
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'user-app', private: true, type: 'module' }));
    const files = readdirSync(tarballs).map((name) => join(tarballs, name));
    expect(files.map((file) => file.slice(tarballs.length + 1)).sort()).toEqual(['tempinbox-client-0.1.0.tgz', 'tempinbox-mcp-0.1.0.tgz']);
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', ...files], { cwd: app, timeout: NPM_TIMEOUT_MS });
  }, NPM_TIMEOUT_MS * 2);
  afterAll(async () => {
    await kit?.close();
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
  });

  it('installs real copies (no workspace links) with both bins', () => {
    expect(lstatSync(join(app, 'node_modules/@tempinbox/client')).isSymbolicLink()).toBe(false);
    expect(lstatSync(join(app, 'node_modules/@tempinbox/mcp')).isSymbolicLink()).toBe(false);
    expect(readdirSync(join(app, 'node_modules/.bin')).sort()).toEqual(expect.arrayContaining(['tempinbox-client', 'tempinbox-mcp']));
  });

  it('runs a user script that imports the library and gets a code', async () => {
    writeFileSync(join(app, 'get-code.mjs'), USER_SCRIPT);
    const child = spawnTestChild(process.execPath, ['get-code.mjs'], { cwd: app, env: { TEMPINBOX_URL: kit.server.baseUrl } });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    const exited = new Promise<number | null>((done) => child.once('close', done));
    const deadline = Date.now() + 10_000;
    while (!out.includes('\n') && Date.now() < deadline) await new Promise((done) => setTimeout(done, 50));
    const address = out.split('\n')[0] ?? '';
    expect(address, err).toMatch(/@tempinbox\.test$/);
    await deliver(kit.server.smtpPort, address, 'code', 'Your code: 606060');
    expect(await exited, err).toBe(0);
    expect(out).toBe(`${address}\n606060\nfunction\n`);
  }, 30_000);

  it('runs tempinbox-client new and code from node_modules/.bin', async () => {
    const env = childEnv({ TEMPINBOX_URL: kit.server.baseUrl, TEMPINBOX_SESSION_FILE: join(work, 'cli-state.json') });
    const bin = join(app, 'node_modules/.bin/tempinbox-client');
    const { stdout: address } = await run(bin, ['new'], { env });
    await deliver(kit.server.smtpPort, address.trim(), 'cli code', 'Code 424242 for the CLI');
    const { stdout: code } = await run(bin, ['code', '--timeout', '10'], { env });
    expect(code).toBe('424242\n');
  }, 30_000);

  it('runs tempinbox-mcp from node_modules/.bin for the MCP client', async () => {
    // The SDK spawns the server; childEnv gives it this run's marker, and the finally closes it.
    const transport = new StdioClientTransport({ command: join(app, 'node_modules/.bin/tempinbox-mcp'), env: childEnv({ TEMPINBOX_URL: kit.server.baseUrl }), stderr: 'ignore' });
    const client = new Client({ name: 'packed-test', version: '1.0.0' });
    try {
      await client.connect(transport);
      expect((await client.listTools()).tools).toHaveLength(7);
      const created = await client.callTool({ name: 'create_inbox', arguments: {} });
      expect(created.structuredContent).toMatchObject({ address: expect.stringMatching(/@tempinbox\.test$/) });
    } finally {
      await client.close();
      // Also when connect failed before the client took the transport over.
      await transport.close();
    }
  }, 30_000);
});
