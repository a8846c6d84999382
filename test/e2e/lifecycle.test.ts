import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnTestChild } from '../helpers/child-processes.js';
import { MAIN, runBin, startServer, tempDataDir } from '../helpers/server-process.js';

/** Runs `node dist/main.js serve` expecting it to refuse to start. */
async function failedStart(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawnTestChild(process.execPath, [MAIN, 'serve'], { env: { PORT: '0', SMTP_PORT: '0', HOST: '127.0.0.1', ...env } });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  const code = await new Promise<number | null>((done) => child.once('exit', (c) => done(c)));
  clearTimeout(timer);
  return { code, stderr };
}

describe('process lifecycle', () => {
  it('creates the SQLite file in WAL mode, logs the listening line, and exits 0 on SIGTERM within 10 s', async () => {
    const data = tempDataDir();
    const server = await startServer({ DATABASE_URL: `sqlite:${join(data.dir, 'nested', 'db.sqlite')}` });
    try {
      const line = server.stdout().split('\n').find((l) => l.includes('"msg":"listening"')) ?? '';
      expect(JSON.parse(line)).toMatchObject({ msg: 'listening', http_port: server.httpPort, smtp_port: server.smtpPort });
      expect(existsSync(join(data.dir, 'nested', 'db.sqlite'))).toBe(true);
      expect(existsSync(join(data.dir, 'nested', 'db.sqlite-wal'))).toBe(true);
      const started = Date.now();
      expect(await server.stop()).toBe(0);
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      await server.kill9();
      data.cleanup();
    }
  });

  it('exits 0 on SIGINT too', async () => {
    const data = tempDataDir();
    const server = await startServer({ DATABASE_URL: data.databaseUrl });
    server.child.kill('SIGINT');
    const code = await new Promise<number | null>((done) => server.child.once('exit', (c) => done(c)));
    expect(code).toBe(0);
    data.cleanup();
  });

  it('stops when `npm start` itself gets SIGTERM (as a supervisor sends it), leaving no orphan', async () => {
    const data = tempDataDir();
    // `exec` in the start script: otherwise sh stays between npm and node and swallows the signal.
    const npm = spawnTestChild('npm', ['start', '--silent'], {
      cwd: resolve(MAIN, '../..'),
      env: { HOME: process.env.HOME ?? '/tmp', PORT: '0', SMTP_PORT: '0', HOST: '127.0.0.1', DATABASE_URL: data.databaseUrl },
    });
    let out = '';
    npm.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    const exited = new Promise<number | null>((done) => npm.once('exit', (c) => done(c)));
    try {
      for (let i = 0; i < 150 && !out.includes('"msg":"listening"'); i += 1) await new Promise((d) => setTimeout(d, 100));
      expect(out).toContain('"msg":"listening"');
      npm.kill('SIGTERM');
      await exited;
      for (let i = 0; i < 50 && !out.includes('"msg":"stopped"'); i += 1) await new Promise((d) => setTimeout(d, 100));
      expect(out).toContain('"msg":"stopped"');
    } finally {
      if (npm.exitCode === null) npm.kill('SIGKILL');
      data.cleanup();
    }
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT="abc": expected an integer from 0 to 65535'],
    [{ DOMAINS: '' }, 'DOMAINS="": expected a comma-separated list'],
    [{ SMTP_PORT: '-5' }, 'SMTP_PORT="-5"'],
    [{ DATABASE_URL: 'sqlite:/etc/hostname/x.db' }, 'DATABASE_URL="sqlite:/etc/hostname/x.db"'],
    [{ DATABASE_URL: 'redis://x' }, 'DATABASE_URL="redis://x": expected'],
  ])('refuses %j with one line naming the variable', async (env, expected) => {
    const result = await failedStart(env as Record<string, string>);
    expect(result.code).not.toBe(0);
    expect(result.code).not.toBeNull();
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(expected);
  });

  it('prints --help for the program and every command, with the configuration table', async () => {
    const top = await runBin(['--help'], {});
    expect(top.code).toBe(0);
    for (const word of ['serve', 'license', 'migrate', 'DATABASE_URL', 'SMTP_PORT']) expect(top.stdout).toContain(word);
    for (const args of [['serve', '--help'], ['migrate', '--help'], ['license', '--help'], ['license', 'create', '--help'], ['license', 'list', '--help'], ['license', 'revoke', '--help']]) {
      const result = await runBin(args, {});
      expect(result.code, args.join(' ')).toBe(0);
      expect(result.stdout).toContain('Usage: tempinbox');
    }
  });

  it('mints keys one per line with nothing else on stdout, lists and revokes them', async () => {
    const data = tempDataDir();
    const env = { DATABASE_URL: data.databaseUrl };
    const created = await runBin(['license', 'create', '--count', '3', '--days', '7', '--max-sessions', '2'], env);
    expect(created.code).toBe(0);
    const keys = created.stdout.trimEnd().split('\n');
    expect(keys).toHaveLength(3);
    for (const key of keys) expect(key).toMatch(/^TI(-[0-9A-Z]{8}){4}$/);
    const list = await runBin(['license', 'list'], env);
    expect(list.stdout.trim().split('\n')).toHaveLength(4);
    expect(list.stdout).not.toContain(keys[0]);
    expect((await runBin(['license', 'revoke', keys[0] ?? ''], env)).stdout).toBe('revoked\n');
    expect((await runBin(['license', 'list'], env)).stdout).toContain('revoked');
    const unknown = await runBin(['license', 'revoke', 'TI-00000000-00000000-00000000-00000000'], env);
    expect(unknown.code).toBe(1);
    expect((await runBin(['license', 'create', '--count', 'zero'], env)).code).not.toBe(0);
    expect((await runBin(['migrate'], env)).stdout).toBe('migrations applied\n');
    data.cleanup();
  });
});
