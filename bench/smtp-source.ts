import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { BENCH_SENDER, BENCH_SENDER_DOMAIN } from './bench-sender.js';
import { secondsSince } from './stats.js';

/** Where Debian's postfix package puts the load generator. */
const DEBIAN_PATH = '/usr/sbin/smtp-source';
/** A run that takes longer than this is stuck (the server stopped answering). */
const RUN_TIMEOUT_MS = 180_000;

/** Which smtp-source to run: the Debian path, else one on PATH. */
function locate(): string | null {
  if (existsSync(DEBIAN_PATH)) return DEBIAN_PATH;
  try {
    return execFileSync('sh', ['-c', 'command -v smtp-source'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

/**
 * Finds postfix's smtp-source, installing Debian's `postfix` package when it is missing and
 * we are root. Only the tool is wanted: debconf is told "No configuration", so the postfix
 * daemon is neither configured nor started (and is stopped if it was running anyway).
 */
export function findSmtpSource(): string {
  const found = locate();
  if (found !== null) return found;
  if (process.getuid?.() !== 0) {
    throw new Error('smtp-source not found: install it with `sudo apt-get install --no-install-recommends postfix` (Debian/Ubuntu)');
  }
  console.error('bench: installing postfix for smtp-source (apt-get, no configuration, daemon not started)');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('sh', ['-c', 'echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections'], { env, stdio: 'inherit' });
  const install = (): void => {
    execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'postfix'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  };
  try {
    install();
  } catch {
    execFileSync('apt-get', ['update'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
    install();
  }
  // An unconfigured postfix does not start; make sure, since port 25 is not ours to take.
  if (existsSync('/var/spool/postfix/pid/master.pid')) execFileSync('postfix', ['stop'], { stdio: 'ignore' });
  const installed = locate();
  if (installed === null) throw new Error('postfix installed but smtp-source still not found');
  return installed;
}

/** One smtp-source invocation. */
export interface SmtpSourceRun {
  port: number;
  sessions: number;
  messages: number;
  /** Payload bytes per message (smtp-source -l), headers not included. */
  size: number;
  /** Several messages per connection (-d) or one message per connection. */
  keepConnection: boolean;
  /** Base recipient; with -N each message goes to `<n><recipient>`, n = 1…messages. */
  recipient: string;
  /** Seconds to wait between messages on one session (-w), for a steady moderate load. */
  waitSeconds?: number;
  /** A prepared message (LF-ended) sent instead of smtp-source's own (-F; `size` is then unused). */
  messageFile?: string;
}

/** Outcome of a finished smtp-source run. */
export interface SmtpSourceResult {
  seconds: number;
  ok: boolean;
  stderr: string;
}

/** Runs smtp-source to completion: every message answered 250, or a failure (exit ≠ 0). */
export function runSmtpSource(binary: string, run: SmtpSourceRun, signal?: AbortSignal): Promise<SmtpSourceResult> {
  const args = [
    '-N',
    '-s', String(run.sessions),
    '-m', String(run.messages),
    // smtp-source refuses -l with -F: the file is the message.
    ...(run.messageFile === undefined ? ['-l', String(run.size)] : ['-F', run.messageFile]),
    '-f', BENCH_SENDER,
    '-t', run.recipient,
    '-M', BENCH_SENDER_DOMAIN,
    '-S', 'tempinbox benchmark',
    ...(run.keepConnection ? ['-d'] : []),
    ...(run.waitSeconds !== undefined ? ['-w', String(run.waitSeconds)] : []),
    `127.0.0.1:${run.port}`,
  ];
  const started = process.hrtime.bigint();
  const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'], signal });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-4000)));
  const timer = setTimeout(() => child.kill('SIGKILL'), RUN_TIMEOUT_MS);
  return new Promise((resolve) => {
    child.once('error', () => undefined);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ seconds: secondsSince(started), ok: code === 0, stderr: stderr.trim() });
    });
  });
}
