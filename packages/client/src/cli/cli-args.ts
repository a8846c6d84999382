import { parseArgs } from 'node:util';

/** A mistake in the command line: exit 2 with the usage hint. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** Every flag of every command; each command accepts only its own and the global ones. */
const OPTIONS = {
  url: { type: 'string' },
  'session-file': { type: 'string' },
  inbox: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
  username: { type: 'string' },
  domain: { type: 'string' },
  to: { type: 'string' },
  from: { type: 'string' },
  subject: { type: 'string' },
  timeout: { type: 'string' },
  match: { type: 'string' },
  limit: { type: 'string' },
  html: { type: 'boolean' },
  count: { type: 'string' },
} as const;

const GLOBAL = ['url', 'session-file', 'inbox', 'json', 'help', 'version'];
const FILTERS = ['to', 'from', 'subject'];

/** The flags and positional arguments of each command. */
export const COMMANDS: Record<string, { flags: string[]; positionals: string[] }> = {
  new: { flags: ['username', 'domain'], positionals: [] },
  address: { flags: [], positionals: [] },
  wait: { flags: [...FILTERS, 'timeout'], positionals: [] },
  code: { flags: [...FILTERS, 'timeout'], positionals: [] },
  link: { flags: ['match', ...FILTERS, 'timeout'], positionals: [] },
  list: { flags: ['limit'], positionals: [] },
  read: { flags: ['html'], positionals: ['ID'] },
  raw: { flags: [], positionals: ['ID'] },
  follow: { flags: [...FILTERS, 'count'], positionals: [] },
  redeem: { flags: [], positionals: ['KEY'] },
  delete: { flags: [], positionals: [] },
  domains: { flags: [], positionals: [] },
};

/** A parsed command line. */
export interface CommandLine {
  command: string | undefined;
  args: string[];
  flags: Partial<Record<keyof typeof OPTIONS, string | boolean>>;
}

/** Parses argv; throws UsageError for an unknown command or flag, or a missing or extra argument. */
export function parseCommandLine(argv: string[]): CommandLine {
  // Message ids are base64url, so one in 64 begins with '-'. This CLI has no short-flag
  // groups (its only short flag is -h), so a single-dash word longer than two characters
  // is an argument: it goes through parseArgs as a placeholder no real argv can hold
  // (argv strings cannot contain NUL) and comes back afterwards.
  const dashWords: string[] = [];
  const args0 = argv.map((word) => (/^-[^-]./.test(word) ? `\0${dashWords.push(word) - 1}` : word));
  let parsed;
  try {
    parsed = parseArgs({ args: args0, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    // parseArgs appends advice about '--' that does not apply to these commands.
    throw new UsageError(((error as Error).message.split('\n')[0] ?? 'bad arguments').replace(/ To specify a positional argument.*$/, ''));
  }
  const restore = (word: string): string => (word.startsWith('\0') ? (dashWords[Number(word.slice(1))] ?? word) : word);
  const [command, ...args] = parsed.positionals.map(restore);
  const flags = Object.fromEntries(
    Object.entries(parsed.values).map(([name, value]) => [name, typeof value === 'string' ? restore(value) : value]),
  ) as CommandLine['flags'];
  if (command === undefined || flags.help === true || flags.version === true) return { command, args, flags };
  const spec = COMMANDS[command];
  if (spec === undefined) throw new UsageError(`Unknown command '${command}'.`);
  for (const name of Object.keys(flags)) {
    if (!GLOBAL.includes(name) && !spec.flags.includes(name)) throw new UsageError(`'${command}' takes no --${name}.`);
  }
  if (args.length !== spec.positionals.length) {
    throw new UsageError(spec.positionals.length === 0 ? `'${command}' takes no arguments.` : `'${command}' takes ${spec.positionals.join(' ')}.`);
  }
  return { command, args, flags };
}

/** A flag's value as a whole number within bounds (a usage error otherwise). */
export function integerFlag(value: string | boolean | undefined, name: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (typeof value !== 'string' || !/^\d+$/.test(value) || number < min || number > max) {
    throw new UsageError(`--${name} must be a whole number from ${min} to ${max}.`);
  }
  return number;
}

/** A string flag (undefined when absent). */
export function stringFlag(value: string | boolean | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export const USAGE = `Usage: tempinbox-client <command> [flags]

  new [--username NAME] [--domain DOMAIN]   create an inbox; prints the address
  address                                  prints the current inbox's address
  wait  [--to S] [--from S] [--subject S] [--timeout SECONDS]   prints "<id> <from> <subject>"
  code  [--to S] [--from S] [--subject S] [--timeout SECONDS]   prints only the code
  link  [--match S] [--to S] [--from S] [--subject S] [--timeout SECONDS]   prints only the URL
  list  [--limit N]                        the newest messages (20 unless --limit)
  read ID [--html]                         prints the text (or the sanitised HTML)
  raw ID                                   writes the raw message, byte for byte
  follow [--to S] [--from S] [--subject S] [--count N]   prints messages as they arrive
  redeem KEY                               redeems a Premium license key
  delete                                   discards the current inbox
  domains                                  the domains addresses can have

Global: --url URL (else TEMPINBOX_URL, else http://localhost:8080), --session-file PATH,
        --inbox ADDRESS, --json, --help, --version
Each wait returns a message no earlier wait on that inbox returned, oldest first.
Exit codes: 0 ok, 1 error, 2 usage, 3 wait timed out, 4 rate limited, 5 session or inbox
gone, 6 server unreachable.
`;
