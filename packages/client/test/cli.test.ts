import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killGroup, spawnTestChild } from '../../../test/helpers/child-processes.js';
import { deliver, startKitServer, type KitServer } from './kit-server.js';

/** The built bin (npm test builds the packages first). */
const CLI = resolve(import.meta.dirname, '../dist/cli/main.js');

/** Runs the CLI to its end (in a process group of its own, marked as this run's): exit code, stdout, stderr. */
function cli(args: string[], env: Record<string, string>, timeoutMs = 20_000): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  const started = Date.now();
  const child = spawnTestChild(process.execPath, [CLI, ...args], { env: { HOME: env.HOME ?? tmpdir(), ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => killGroup(child), timeoutMs);
  return new Promise((done) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr, ms: Date.now() - started });
    }),
  );
}

describe('tempinbox-client', () => {
  let kit: KitServer;
  let home: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    kit = await startKitServer({ RATE_LIMITS: 'off' });
    home = mkdtempSync(join(tmpdir(), 'tempinbox-cli-'));
    env = { TEMPINBOX_URL: kit.server.baseUrl, XDG_CONFIG_HOME: join(home, 'config'), HOME: home };
  }, 60_000);
  afterAll(async () => {
    await kit?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('new → code → code prints the codes of two messages in arrival order, across invocations', async () => {
    const created = await cli(['new'], env);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const address = created.stdout.trim();
    expect(created.stdout).toBe(`${address}\n`);
    expect(address).toMatch(/^[a-z][a-z0-9]{9}@tempinbox\.test$/);
    const statePath = join(home, 'config', 'tempinbox', 'session.json');
    expect(statSync(statePath).mode & 0o777).toBe(0o600);
    expect(statSync(join(home, 'config', 'tempinbox')).mode & 0o777).toBe(0o700);

    await deliver(kit.server.smtpPort, address, 'first', 'Your code is 314159');
    await deliver(kit.server.smtpPort, address, 'second', 'Your code is 271828');
    expect(await cli(['code', '--timeout', '10'], env)).toMatchObject({ code: 0, stdout: '314159\n' });
    expect(await cli(['code', '--timeout', '10'], env)).toMatchObject({ code: 0, stdout: '271828\n' });
    expect(await cli(['address'], env)).toMatchObject({ code: 0, stdout: `${address}\n` });

    const listed = await cli(['list', '--json'], env);
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trim().split('\n').map((line) => JSON.parse(line) as { subject: string; id: string });
    expect(lines.map((line) => line.subject)).toEqual(['second', 'first']);
    const read = await cli(['read', lines[1]?.id ?? ''], env);
    expect(read).toMatchObject({ code: 0, stdout: 'Your code is 314159\n' });
    const raw = await cli(['raw', lines[1]?.id ?? ''], env);
    expect(raw.stdout).toMatch(/^Return-Path: <sender@example\.org>\r\n/);
    expect(raw.stdout).toContain('Subject: first\r\n');

    // --json: one object that parses; the wait there has nothing left and times out: exit 3.
    const timedOut = await cli(['wait', '--timeout', '1', '--json'], env);
    expect(timedOut.code).toBe(3);
    expect(JSON.parse(timedOut.stderr)).toMatchObject({ error: { code: 'timeout' } });
    expect(timedOut.ms).toBeLessThan(1000 + 2500);
    const domains = await cli(['domains', '--json'], env);
    expect(JSON.parse(domains.stdout)).toEqual({ domains: ['tempinbox.test'] });
  }, 60_000);

  it('exits 5 once the inbox is deleted, 2 for a bad flag, and 6 when the server is stopped', async () => {
    const sessionFile = join(home, 'other', 'state.json');
    const own = await startKitServer();
    const ownEnv = { ...env, TEMPINBOX_URL: own.server.baseUrl };
    try {
      expect((await cli(['new', '--session-file', sessionFile], ownEnv)).code).toBe(0);
      expect(statSync(sessionFile).mode & 0o777).toBe(0o600);
      expect(await cli(['delete', '--session-file', sessionFile], ownEnv)).toMatchObject({ code: 0 });
      const gone = await cli(['code', '--timeout', '2', '--session-file', sessionFile], ownEnv);
      expect(gone.code).toBe(5);
      expect(gone.stderr).toMatch(/^tempinbox-client: .*\(inbox_not_found\)\n$/);

      const bad = await cli(['code', '--colour'], ownEnv);
      expect(bad.code).toBe(2);
      expect(bad.stderr).not.toContain('    at ');
      expect((await cli(['nonsense'], ownEnv)).code).toBe(2);
      expect((await cli(['code', '--timeout', 'soon'], ownEnv)).code).toBe(2);
    } finally {
      await own.close();
    }
    const unreachable = await cli(['domains'], ownEnv);
    expect(unreachable.code).toBe(6);
    expect(unreachable.stderr.trim().split('\n')).toHaveLength(1);
    expect(unreachable.stderr).toContain('(network_error)');
  }, 60_000);

  it('exits 4 when rate limited after its retries', async () => {
    let requests = 0;
    const limited = createServer((_request, response) => {
      requests += 1;
      response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '0' });
      response.end(JSON.stringify({ success: false, error: { code: 'rate_limited', message: 'Too many requests.' } }));
    });
    await new Promise<void>((done) => limited.listen(0, '127.0.0.1', () => done()));
    const address = limited.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    try {
      const answer = await cli(['domains', '--url', `http://127.0.0.1:${address.port}`, '--json'], env);
      expect(answer.code).toBe(4);
      expect(JSON.parse(answer.stderr)).toMatchObject({ error: { code: 'rate_limited' } });
      expect(requests).toBe(4);
    } finally {
      await new Promise<void>((done) => limited.close(() => done()));
    }
  });
});
