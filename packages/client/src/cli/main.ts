#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { TempInboxError } from '../index.js';
import { parseCommandLine, USAGE, UsageError } from './cli-args.js';
import { runCommand } from './run-command.js';

/** The documented exit codes (README, packages/client/README.md). */
export const EXIT = { ok: 0, error: 1, usage: 2, timeout: 3, rateLimited: 4, gone: 5, unreachable: 6 } as const;

/** The exit code for an error. */
export function exitCodeOf(error: unknown): number {
  if (error instanceof UsageError) return EXIT.usage;
  if (!(error instanceof TempInboxError)) return EXIT.error;
  if (error.code === 'timeout') return EXIT.timeout;
  if (error.status === 429) return EXIT.rateLimited;
  if (error.status === 401 || error.status === 404 || error.status === 410) return EXIT.gone;
  if (error.code === 'network_error') return EXIT.unreachable;
  return EXIT.error;
}

function version(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return manifest.version;
}

/** A reader that went away (`… | head -1`) has all it wanted: end quietly, as a pipe's writer does. */
function onStdoutError(error: NodeJS.ErrnoException): void {
  if (error.code === 'EPIPE') process.exit(EXIT.ok);
  process.stderr.write(`tempinbox-client: cannot write the output: ${error.message}\n`);
  process.exit(EXIT.error);
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  const json = argv.includes('--json');
  const stop = new AbortController();
  process.stdout.on('error', onStdoutError);
  try {
    const commandLine = parseCommandLine(argv);
    if (commandLine.flags.version === true) {
      process.stdout.write(`${version()}\n`);
      return EXIT.ok;
    }
    if (commandLine.flags.help === true) {
      process.stdout.write(USAGE);
      return EXIT.ok;
    }
    if (commandLine.command === undefined) throw new UsageError('No command given.');
    if (commandLine.command === 'follow') {
      // Ctrl-C ends `follow` cleanly: exit 0 after what was printed. Every other command keeps
      // the default, so an interrupted wait stops at once.
      process.once('SIGINT', () => stop.abort());
      process.once('SIGTERM', () => stop.abort());
    }
    await runCommand(commandLine, process.env, {
      line: (text) => process.stdout.write(`${text}\n`),
      bytes: (data) => new Promise((done, fail) => process.stdout.write(data, (error) => (error ? fail(error) : done()))),
    }, stop.signal);
    return EXIT.ok;
  } catch (error) {
    if (stop.signal.aborted || (error as NodeJS.ErrnoException).code === 'EPIPE') return EXIT.ok;
    const code = error instanceof TempInboxError ? error.code : error instanceof UsageError ? 'usage' : 'error';
    const message = (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ');
    if (json) process.stderr.write(`${JSON.stringify({ error: { code, message } })}\n`);
    else if (error instanceof UsageError) process.stderr.write(`tempinbox-client: ${message} Run 'tempinbox-client --help' for the commands and flags.\n`);
    else process.stderr.write(`tempinbox-client: ${message}${error instanceof TempInboxError ? ` (${code})` : ''}\n`);
    return exitCodeOf(error);
  }
}

process.exitCode = await main();
