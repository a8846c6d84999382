import { Command, InvalidArgumentError } from 'commander';
import type { App } from './app.js';
import { ConfigError, loadConfigFromEnvironment } from './config/load-config.js';
import { CONFIG_SCHEMA, type Config } from './config/schema.js';
import { StartupError } from './config/startup-error.js';
import { DEFAULT_LICENSE_DAYS, DEFAULT_MAX_SESSIONS } from './services/license-service.js';
import { recountAllUsage } from './services/usage-recount.js';
import { createLogger, flushLogger } from './observability/logger.js';
import { VIEWS } from './ports/message-reads.js';

/** SIGTERM/SIGINT drain for at most this long, then the process exits anyway (README.md "Quick start": SIGTERM drains). */
export const SHUTDOWN_DEADLINE_MS = 10_000;

/**
 * The cut of a postmaster listing: the largest both databases take as a substring length, far
 * above any message the SMTP listener accepts, so each body is printed whole.
 */
const WHOLE_BODY_BYTES = 2 ** 31 - 1;

/** The `tempinbox` command line (`serve` is what `npm start` runs). */
export async function runCli(argv: string[]): Promise<void> {
  const program = new Command()
    .name('tempinbox')
    .description('Temporary e-mail inboxes: HTTP API and SMTP MX in one process.')
    .addHelpText('after', `\nConfiguration (environment variables):\n${configHelp()}`)
    .showHelpAfterError();

  program
    .command('serve')
    .description('serve HTTP and SMTP (runs migrations first)')
    .addHelpText('after', `\nConfiguration (environment variables):\n${configHelp()}`)
    .action(serve);

  program
    .command('migrate')
    .description('apply pending database migrations and exit')
    .action(async () => {
      await withApp(async () => undefined);
      process.stdout.write('migrations applied\n');
    });

  program
    .command('recount-usage')
    .description("set every inbox's stored usage counters to a count of its messages (safe while the server runs)")
    .action(async () => {
      const { checked, corrected } = await withApp((app) => recountAllUsage(app.store));
      process.stdout.write(`recounted ${checked} inboxes, corrected ${corrected}\n`);
    });

  const license = program.command('license').description('mint, list and revoke Premium licenses');
  license
    .command('create')
    .description('mint license keys; prints one key per line on stdout and nothing else')
    .option('--count <n>', 'how many keys', positiveInteger(10_000), 1)
    .option('--days <d>', 'validity in days', positiveInteger(36_500), DEFAULT_LICENSE_DAYS)
    .option('--max-sessions <s>', 'sessions (devices) that may redeem each key', positiveInteger(10_000), DEFAULT_MAX_SESSIONS)
    .action(async (options: { count: number; days: number; maxSessions: number }) => {
      const keys = await withApp((app) => app.licenses.mint(options));
      process.stdout.write(keys.map((key) => `${key}\n`).join(''));
    });
  license
    .command('list')
    .description('list licenses (keys are stored hashed: the hash prefix identifies them)')
    .action(async () => {
      const rows = await withApp((app) => app.licenses.list());
      const now = Date.now();
      process.stdout.write('key_hash      created               valid_until           max_sessions  sessions  inboxes  status\n');
      for (const row of rows) {
        const status = row.revokedAt !== null ? 'revoked' : row.validUntil.getTime() <= now ? 'expired' : 'active';
        process.stdout.write(
          `${row.keyHash.slice(0, 12)}  ${row.createdAt.toISOString().slice(0, 19)}Z  ${row.validUntil.toISOString().slice(0, 19)}Z  ` +
            `${String(row.maxSessions).padEnd(12)}  ${String(row.sessions).padEnd(8)}  ${String(row.activeInboxes).padEnd(7)}  ${status}\n`,
        );
      }
    });
  license
    .command('revoke')
    .description('revoke a license key: its sessions become free again; inboxes keep their expiry')
    .argument('<key>', 'the license key')
    .action(async (key: string) => {
      const revoked = await withApp((app) => app.licenses.revoke(key));
      if (!revoked) {
        process.stderr.write('no such license key\n');
        process.exitCode = 1;
        return;
      }
      process.stdout.write('revoked\n');
    });

  program
    .command('postmaster')
    .description('print the mail received for postmaster@ (one JSON object per line, newest first)')
    .option('--limit <n>', 'how many messages', positiveInteger(1000), 50)
    .action(async (options: { limit: number }) => {
      await withApp(async (app) => {
        const inboxId = await app.delivery.postmasterInboxId();
        const { messages } = await app.store.readPage(inboxId, { limit: options.limit, maxFieldBytes: WHOLE_BODY_BYTES }, VIEWS);
        for (const m of messages) {
          process.stdout.write(`${JSON.stringify({ id: m.id, date: m.receivedAt.toISOString(), from: m.from, to: m.to, subject: m.subject, body: m.text })}\n`);
        }
      });
    });

  await program.parseAsync(argv);
}

/** `serve`: start both listeners; drain and exit 0 on SIGTERM/SIGINT. */
async function serve(): Promise<void> {
  const config = configOrExit();
  const logger = createLogger(config.logLevel);
  let app: App | undefined;
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const deadline = setTimeout(() => {
      logger.warn('drain deadline passed; exiting');
      process.exit(0);
    }, SHUTDOWN_DEADLINE_MS);
    deadline.unref();
    (app?.stop() ?? Promise.resolve())
      .then(
        () => logger.info('stopped'),
        (error: unknown) => logger.error({ err: error }, 'error while stopping'),
      )
      // The log is written asynchronously: let the last lines out before exiting.
      .then(() => flushLogger(logger))
      .finally(() => process.exit(0));
  };
  // Installed before the listeners open: the "listening" line may be read, and a signal
  // sent, before start() returns.
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  try {
    app = await (await loadApp()).createApp(config, { logger });
    await app.start();
  } catch (error) {
    process.stderr.write(`${startFailure(error)}\n`);
    process.exit(1);
  }
}

/**
 * One line saying why start-up failed: the variable, its value and what was expected when
 * one is to blame (the database, a port, a TLS file), else the error itself. Never multi-line:
 * the reason of a driver error may contain newlines.
 */
function startFailure(error: unknown): string {
  const line = error instanceof StartupError ? `cannot start: ${error.message}` : `cannot start: ${error instanceof Error ? error.message : String(error)}`;
  return line.replace(/\s*\n\s*/g, ' ');
}

/** The configuration, or exit 2 with one line per bad variable. */
function configOrExit(): Config {
  try {
    return loadConfigFromEnvironment();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
}

/**
 * The composition root, imported when a command needs it: it loads every library of the
 * server (about a second), which `--help` and a bad argument should not wait for.
 */
const loadApp = (): Promise<typeof import('./app.js')> => import('./app.js');

/**
 * Runs a one-shot command on the app built by the composition root (nothing listens), with
 * the database migrated; closes it afterwards. Logs go to stderr, so stdout carries only the
 * command's output (license keys, one per line).
 */
async function withApp<T>(work: (app: App) => Promise<T>): Promise<T> {
  const config = configOrExit();
  let app: App;
  try {
    app = await (await loadApp()).createApp(config, { logger: createLogger('warn', process.stderr) });
    await app.migrate();
  } catch (error) {
    process.stderr.write(`${startFailure(error)}\n`);
    process.exit(1);
  }
  try {
    return await work(app);
  } finally {
    await app.stop();
  }
}

function positiveInteger(max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < 1 || n > max) throw new InvalidArgumentError(`expected an integer from 1 to ${max}`);
    return n;
  };
}

/** The configuration table for --help, from the one schema. */
function configHelp(): string {
  return CONFIG_SCHEMA.map((e) => `  ${e.env.padEnd(22)} ${(e.defaultText ?? '(unset)').padEnd(28)} ${e.help}`).join('\n');
}

