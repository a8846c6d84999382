import { DEFAULT_BASE_URL, TempInboxClient, TempInboxError, type Inbox, type Message } from '../index.js';
import { integerFlag, stringFlag, UsageError, type CommandLine } from './cli-args.js';
import { readState, serverState, stateFilePath, writeState, type ServerState, type StateFile } from './state-file.js';

/** The handle `read` and `raw` use when no inbox is known: a message is found by its id alone. */
const ANY_INBOX = '-';
/** Longest `--timeout`: an hour; a CI job that waits longer for a mail has another problem. */
const MAX_TIMEOUT_SECONDS = 3600;
/** Messages `list` shows unless --limit says otherwise. */
const DEFAULT_LIST_LIMIT = 20;
/** Most messages `list --limit` may ask for. */
const MAX_LIST_LIMIT = 10_000;

/** Where a command writes: stdout as text or bytes. */
export interface Output {
  line: (text: string) => void;
  bytes: (data: Uint8Array) => Promise<void>;
}

/** Runs one parsed command; throws UsageError, TempInboxError or Error. */
export async function runCommand(commandLine: CommandLine, env: NodeJS.ProcessEnv, out: Output, signal: AbortSignal): Promise<void> {
  const { command, args, flags } = commandLine;
  const json = flags.json === true;
  const baseUrl = chooseBaseUrl(stringFlag(flags.url), env.TEMPINBOX_URL);
  const statePath = stateFilePath(stringFlag(flags['session-file']), env);
  const state = readState(statePath);
  const server = serverState(state, baseUrl);
  const envSession = env.TEMPINBOX_SESSION || undefined;
  const client = new TempInboxClient({ baseUrl, session: envSession ?? server.session });
  const save = () => {
    // A session given in the environment (a CI secret) is not written to disk.
    if (envSession === undefined) server.session = client.session;
    writeState(statePath, state);
  };
  const filters = { to: stringFlag(flags.to), from: stringFlag(flags.from), subject: stringFlag(flags.subject) };
  // Every flag's value is checked before any request: a bad value is a usage error (exit 2) whatever the state.
  const timeout = (integerFlag(flags.timeout, 'timeout', 1, MAX_TIMEOUT_SECONDS) ?? 60) * 1000;
  const limit = integerFlag(flags.limit, 'limit', 1, MAX_LIST_LIMIT) ?? DEFAULT_LIST_LIMIT;
  const count = integerFlag(flags.count, 'count', 1, Number.MAX_SAFE_INTEGER);
  const print = (plain: string, object: unknown) => out.line(json ? JSON.stringify(object) : plain);

  switch (command) {
    case 'new': {
      const inbox = await client.createInbox({ username: stringFlag(flags.username), domain: stringFlag(flags.domain) });
      server.current = inbox.address;
      server.inboxes[inbox.address] ??= { returned: [] };
      save();
      print(inbox.address, { address: inbox.address, username: inbox.username, domain: inbox.domain, expires_at: inbox.expiresAt.toISOString() });
      return;
    }
    case 'domains': {
      const domains = await client.domains();
      if (json) print('', { domains });
      else for (const domain of domains) out.line(domain);
      return;
    }
    case 'redeem': {
      const answer = await client.redeem(args[0] ?? '');
      save();
      print(`premium until ${answer.premium_until}`, answer);
      return;
    }
  }

  const address = stringFlag(flags.inbox) ?? server.current;
  // A message is read by its id alone: any inbox of the session, none needed in this state file.
  if (command === 'read' || command === 'raw') {
    await readById(client.inbox(address ?? ANY_INBOX), command, args[0] ?? '', flags.html === true, json, out);
    return;
  }
  if (address === undefined) throw new TempInboxError(0, 'no_inbox', "No inbox yet: run 'tempinbox-client new' first (or pass --inbox ADDRESS).");
  const known = recordName(server, address);
  const remembered = (server.inboxes[known] ??= { returned: [] });
  const inbox = client.inbox(known, { after: remembered.after, returned: remembered.returned });
  const waited = (message: Message) => {
    remembered.returned = inbox.returned;
    save();
    return message;
  };

  switch (command) {
    case 'address': {
      // Asked of the server, so that a deleted or expired inbox exits 5 like every other command on it.
      const active = await activeAddress(client, address);
      print(active, { address: active });
      return;
    }
    case 'wait': {
      const message = waited(await inbox.waitForMessage({ ...filters, timeout }));
      print(`${message.id} ${message.from} ${message.subject}`, message);
      return;
    }
    case 'code': {
      const { code, message } = await inbox.waitForCode({ ...filters, timeout });
      waited(message);
      print(code, { code, message });
      return;
    }
    case 'link': {
      const { url, text, message } = await inbox.waitForLink({ ...filters, match: stringFlag(flags.match), timeout });
      waited(message);
      print(url, { url, text, message });
      return;
    }
    case 'list': {
      let shown = 0;
      for await (const message of inbox.messages()) {
        if (shown >= limit) break;
        print(`${message.id} ${message.date} ${message.from} ${message.subject}`, message);
        shown += 1;
      }
      return;
    }
    case 'follow':
      await follow(inbox, filters, count, signal, print);
      return;
    case 'delete':
      await inbox.delete();
      print(`deleted ${address}`, { deleted: true, address });
      return;
    default:
      throw new UsageError(`Unknown command '${command ?? ''}'.`);
  }
}

/**
 * The state's name for the inbox `address` names. A username is unique across domains and
 * case-insensitive, so `ALICE@x` and `alice` find the record of `alice@x`: one record of
 * returned messages per inbox, and no message returned twice.
 */
function recordName(server: ServerState, address: string): string {
  const username = (address.split('@')[0] ?? '').toLowerCase();
  return Object.keys(server.inboxes).find((name) => (name.split('@')[0] ?? '').toLowerCase() === username) ?? address;
}

/** The base URL: --url, else TEMPINBOX_URL, else the default; a value that is no http(s) URL is a usage error. */
function chooseBaseUrl(flag: string | undefined, variable: string | undefined): string {
  const [source, value] = flag !== undefined ? ['--url', flag] : variable !== undefined && variable !== '' ? ['TEMPINBOX_URL', variable] : ['', DEFAULT_BASE_URL];
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new UsageError(`${source} must be an http:// or https:// URL, not ${JSON.stringify(value)}.`);
  }
  return value;
}

/** The full address of the session's active inbox `address` names; inbox_not_found (exit 5) when it is gone. */
async function activeAddress(client: TempInboxClient, address: string): Promise<string> {
  const wanted = address.toLowerCase();
  const username = wanted.split('@')[0];
  const found = (await client.inboxes()).find((inbox) => inbox.address === wanted || (!wanted.includes('@') && inbox.username === username));
  if (found === undefined) throw new TempInboxError(404, 'inbox_not_found', `The inbox ${address} is gone (deleted or expired); run 'tempinbox-client new' for another.`);
  return found.address;
}

/** `read ID` (the text, the HTML or with --json the whole message) and `raw ID` (the bytes). */
async function readById(inbox: Inbox, command: 'read' | 'raw', id: string, html: boolean, json: boolean, out: Output): Promise<void> {
  if (command === 'raw') {
    await out.bytes(await inbox.raw(id));
    return;
  }
  const message = await inbox.message(id);
  if (json) {
    out.line(JSON.stringify(message));
    return;
  }
  const text = html ? (message.html ?? '') : message.body;
  out.line(text.endsWith('\n') ? text.slice(0, -1) : text);
}

/** Prints arriving messages that match the filters (the stream has none: matched here, as check does). */
async function follow(
  inbox: Inbox,
  filters: { to?: string; from?: string; subject?: string },
  count: number | undefined,
  signal: AbortSignal,
  print: (plain: string, object: unknown) => void,
): Promise<void> {
  const has = (value: string, needle: string | undefined) => needle === undefined || value.toLowerCase().includes(needle.toLowerCase());
  let printed = 0;
  for await (const message of inbox.follow({ signal })) {
    if (!has(message.recipient, filters.to) || !has(message.from, filters.from) || !has(message.subject, filters.subject)) continue;
    print(`${message.id} ${message.from} ${message.subject}`, message);
    printed += 1;
    if (count !== undefined && printed >= count) return;
  }
}

export type { ServerState, StateFile };
