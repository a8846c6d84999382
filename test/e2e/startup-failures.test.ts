import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnTestChild } from '../helpers/child-processes.js';
import { toolAvailable } from '../helpers/external-tools.js';
import { MAIN, tempDataDir } from '../helpers/server-process.js';

/** A refused start must end this fast: it is one failed open or listen, not a retry loop (margin for a loaded machine). */
const FAILED_START_BUDGET_MS = 10_000;

/** Runs `node dist/main.js serve` expecting it to refuse to start; SIGKILLs it past the budget (code null). */
async function failedStart(env: Record<string, string>): Promise<{ code: number | null; stderr: string; ms: number }> {
  const started = Date.now();
  const child = spawnTestChild(process.execPath, [MAIN, 'serve'], { env: { PORT: '0', SMTP_PORT: '0', HOST: '127.0.0.1', ...env } });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const timer = setTimeout(() => child.kill('SIGKILL'), FAILED_START_BUDGET_MS);
  const code = await new Promise<number | null>((done) => child.once('exit', (c) => done(c)));
  clearTimeout(timer);
  return { code, stderr, ms: Date.now() - started };
}

/** Asserts a non-zero exit with exactly one stderr line containing every part of `expected`, and none of `not`. */
function expectOneLine(result: { code: number | null; stderr: string }, expected: string[], not: string[] = []): void {
  expect(result.code, result.stderr).not.toBeNull();
  expect(result.code).not.toBe(0);
  const lines = result.stderr.trim().split('\n');
  expect(lines, result.stderr).toHaveLength(1);
  for (const part of expected) expect(lines[0]).toContain(part);
  for (const part of not) expect(lines[0]).not.toContain(part);
}

const hasOpenssl = toolAvailable('openssl', 'a failed start names TLS_CERT_FILE or TLS_KEY_FILE');

describe('a failed start names what failed', () => {
  const data = tempDataDir();
  let occupied: Server;
  let occupiedPort = 0;

  beforeAll(async () => {
    occupied = createServer();
    await new Promise<void>((done) => occupied.listen(0, '127.0.0.1', () => done()));
    const address = occupied.address();
    occupiedPort = typeof address === 'object' && address !== null ? address.port : 0;
  });
  afterAll(async () => {
    await new Promise<void>((done) => occupied.close(() => done()));
    data.cleanup();
  });

  it('a database folder the file system refuses (/proc) exits at once with one DATABASE_URL line', async () => {
    // Node's recursive mkdir loops forever on /proc/nope (ENOENT although /proc exists).
    const result = await failedStart({ DATABASE_URL: 'sqlite:/proc/nope/db.sqlite' });
    expectOneLine(result, ['DATABASE_URL="sqlite:/proc/nope/db.sqlite"']);
    expect(result.ms).toBeLessThan(FAILED_START_BUDGET_MS);
  });

  it('an HTTP port in use names PORT, not the database', async () => {
    const result = await failedStart({ DATABASE_URL: data.databaseUrl, PORT: String(occupiedPort) });
    expectOneLine(result, [`PORT="${occupiedPort}"`, 'EADDRINUSE'], ['DATABASE_URL', 'SMTP_PORT']);
  });

  it('an SMTP port in use names SMTP_PORT, not the database', async () => {
    const result = await failedStart({ DATABASE_URL: data.databaseUrl, SMTP_PORT: String(occupiedPort) });
    expectOneLine(result, [`SMTP_PORT="${occupiedPort}"`, 'EADDRINUSE'], ['DATABASE_URL']);
  });

  it.skipIf(!hasOpenssl)('an invalid certificate names TLS_CERT_FILE, a key that does not match names TLS_KEY_FILE', async () => {
    const certFile = join(data.dir, 'cert.pem');
    const keyFile = join(data.dir, 'key.pem');
    const otherKeyFile = join(data.dir, 'other-key.pem');
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-days', '1', '-keyout', keyFile, '-out', certFile], {
      stdio: 'ignore',
      timeout: 30_000,
    });
    execFileSync('openssl', ['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', otherKeyFile], { stdio: 'ignore', timeout: 30_000 });
    const badCertFile = join(data.dir, 'bad-cert.pem');
    writeFileSync(badCertFile, '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n');

    const badCert = await failedStart({ DATABASE_URL: data.databaseUrl, TLS_CERT_FILE: badCertFile, TLS_KEY_FILE: keyFile });
    expectOneLine(badCert, [`TLS_CERT_FILE="${badCertFile}"`], ['DATABASE_URL']);

    const wrongKey = await failedStart({ DATABASE_URL: data.databaseUrl, TLS_CERT_FILE: certFile, TLS_KEY_FILE: otherKeyFile });
    expectOneLine(wrongKey, [`TLS_KEY_FILE="${otherKeyFile}"`], ['DATABASE_URL']);
  });
});
