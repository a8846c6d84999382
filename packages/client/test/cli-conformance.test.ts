import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnTestChild, waitForExit, type TestChild } from '../../../test/helpers/child-processes.js';
import { sendRawSmtp } from '../../../test/helpers/send-raw-smtp.js';
import { deliver, startKitServer, type KitServer } from './kit-server.js';

/** The built bin (npm test builds the packages first). */
const CLI = resolve(import.meta.dirname, '../dist/cli/main.js');

/** What a finished CLI run gave. */
interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Collects a child's output until it exits (killed after `timeoutMs`). */
function finished(child: TestChild, timeoutMs: number): Promise<Run> {
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((done) =>
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      done({ code, signal, stdout, stderr });
    }),
  );
}

/** Runs `tempinbox-client args…` to its end. */
function cli(args: string[], env: Record<string, string>, timeoutMs = 20_000): Promise<Run> {
  return finished(spawnTestChild(process.execPath, [CLI, ...args], { env }), timeoutMs);
}

/** The lines a run wrote to stderr. */
const stderrLines = (run: Run) => run.stderr.split('\n').filter((line) => line !== '');

describe('tempinbox-client against the command-line contract', () => {
  let kit: KitServer;
  let home: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    kit = await startKitServer({ RATE_LIMITS: 'off' });
    home = mkdtempSync(join(tmpdir(), 'tempinbox-cli-conformance-'));
    env = { TEMPINBOX_URL: kit.server.baseUrl, XDG_CONFIG_HOME: join(home, 'config'), HOME: home };
  }, 60_000);
  afterAll(async () => {
    await kit?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('reports a usage error in one line on stderr (one JSON object with --json), exit 2', async () => {
    for (const args of [['nonsense'], ['code', '--colour'], ['list', '--limit', '0'], []]) {
      const plain = await cli(args, env);
      expect(plain.code, args.join(' ')).toBe(2);
      expect(stderrLines(plain), args.join(' ')).toHaveLength(1);
      expect(plain.stderr).toMatch(/^tempinbox-client: .*--help/);
      const json = await cli([...args, '--json'], env);
      expect(json.code).toBe(2);
      expect(stderrLines(json)).toHaveLength(1);
      expect(JSON.parse(json.stderr)).toEqual({ error: { code: 'usage', message: expect.any(String) } });
    }
  });

  it('exits 2 for a base URL that is not an http(s) URL, from --url or TEMPINBOX_URL', async () => {
    const flag = await cli(['domains', '--url', 'not a url'], env);
    expect(flag.code).toBe(2);
    expect(stderrLines(flag)).toHaveLength(1);
    expect(flag.stderr).toContain('--url');
    const variable = await cli(['domains'], { ...env, TEMPINBOX_URL: 'ftp://127.0.0.1/' });
    expect(variable.code).toBe(2);
    expect(variable.stderr).toContain('TEMPINBOX_URL');
  });

  it('exits 5 for every later command on a deleted inbox, address included, until the next new', async () => {
    const fileEnv = { ...env, TEMPINBOX_SESSION_FILE: join(home, 'deleted.json') };
    const address = (await cli(['new'], fileEnv)).stdout.trim();
    expect(address).toMatch(/@tempinbox\.test$/);
    expect((await cli(['address'], fileEnv)).stdout).toBe(`${address}\n`);
    expect((await cli(['delete'], fileEnv)).code).toBe(0);
    for (const args of [['address'], ['list'], ['code', '--timeout', '1']]) {
      const gone = await cli(args, fileEnv);
      expect(gone.code, args.join(' ')).toBe(5);
      expect(gone.stdout).toBe('');
      expect(stderrLines(gone)).toHaveLength(1);
    }
    const next = (await cli(['new'], fileEnv)).stdout.trim();
    expect(await cli(['address'], fileEnv)).toMatchObject({ code: 0, stdout: `${next}\n` });
  });

  it('reads a message by id with only TEMPINBOX_SESSION (no inbox made by this state file)', async () => {
    const maker = { ...env, TEMPINBOX_SESSION_FILE: join(home, 'maker.json') };
    const address = (await cli(['new'], maker)).stdout.trim();
    await deliver(kit.server.smtpPort, address, 'by id', 'read me by id');
    const waited = JSON.parse((await cli(['wait', '--json', '--timeout', '10'], maker)).stdout) as { id: string };
    const session = JSON.parse((await cli(['--json', 'list'], maker)).stdout.split('\n')[0] ?? '{}') as { id: string };
    expect(session.id).toBe(waited.id);
    const state = JSON.parse(readFileSync(join(home, 'maker.json'), 'utf8')) as { servers: Record<string, { session: string }> };
    const cookie = Object.values(state.servers)[0]?.session ?? '';

    const fresh = { ...env, TEMPINBOX_SESSION_FILE: join(home, 'fresh.json'), TEMPINBOX_SESSION: cookie };
    expect(await cli(['read', waited.id], fresh)).toMatchObject({ code: 0, stdout: 'read me by id\n', stderr: '' });
    const raw = await cli(['raw', waited.id], fresh);
    expect(raw.code).toBe(0);
    expect(raw.stdout).toContain('Subject: by id');
  });

  it('keeps one record of returned messages per inbox, however --inbox writes it', async () => {
    const fileEnv = { ...env, TEMPINBOX_SESSION_FILE: join(home, 'spelling.json') };
    const address = (await cli(['new'], fileEnv)).stdout.trim();
    await deliver(kit.server.smtpPort, address, 'once', 'Your code is 808201');
    expect(await cli(['code', '--timeout', '10'], fileEnv)).toMatchObject({ code: 0, stdout: '808201\n' });
    for (const spelling of [address.toUpperCase(), address.split('@')[0] ?? '']) {
      const again = await cli(['code', '--inbox', spelling, '--timeout', '1'], fileEnv);
      expect(again.code, spelling).toBe(3);
      expect(again.stdout).toBe('');
    }
  }, 30_000);

  it('ends quietly, without a stack trace, when the reader of its output goes away', async () => {
    const fileEnv = { ...env, TEMPINBOX_SESSION_FILE: join(home, 'pipe.json') };
    const address = (await cli(['new'], fileEnv)).stdout.trim();
    // Larger than a pipe's buffer, so the writer meets the closed pipe.
    const big = `From: sender@example.org\r\nTo: ${address}\r\nSubject: big\r\n\r\n${'x'.repeat(76).concat('\r\n').repeat(8_000)}`;
    expect(await sendRawSmtp(kit.server.smtpPort, 'sender@example.org', address, new TextEncoder().encode(big))).toMatch(/^250/);
    const id = (JSON.parse((await cli(['wait', '--json', '--timeout', '10'], fileEnv)).stdout) as { id: string }).id;
    const script = `"${process.execPath}" "${CLI}" raw ${id} | head -c 10 >/dev/null; echo "exit=\${PIPESTATUS[0]}"`;
    const run = await finished(spawnTestChild('bash', ['-c', script], { env: fileEnv }), 20_000);
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('exit=0\n');
  });

  it('stops a wait at Ctrl-C instead of holding on until its timeout', async () => {
    const fileEnv = { ...env, TEMPINBOX_SESSION_FILE: join(home, 'interrupt.json') };
    await cli(['new'], fileEnv);
    const child = spawnTestChild(process.execPath, [CLI, 'code', '--timeout', '60'], { env: fileEnv });
    const run = finished(child, 60_000);
    await new Promise((done) => setTimeout(done, 1_500));
    const interrupted = Date.now();
    child.kill('SIGINT');
    expect(await waitForExit(child, 5_000)).not.toBe(undefined);
    const result = await run;
    expect(Date.now() - interrupted).toBeLessThan(5_000);
    expect(result.stdout).toBe('');
    expect(result.stderr).not.toContain('    at ');
  }, 30_000);
});
