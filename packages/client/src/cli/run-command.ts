import { TempInboxClient, TempInboxError, type Inbox, type Message } from '../index.js';
import { integerFlag, stringFlag, UsageError, type CommandLine } from './cli-args.js';
import { readState, serverState, stateFilePath, writeState, type ServerState, type StateFile } from './state-file.js';

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
  const baseUrl = stringFlag(flags.url) ?? (env.TEMPINBOX_URL || undefined) ?? 'http://localhost:8080';
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
  const timeout = (integerFlag(flags.timeout, 'timeout', 1, MAX_TIMEOUT_SECONDS) ?? 60) * 1000;
  const print = (plain: string, object: unknown) => out.line(json ? JSON.stringify(object) : plain);

  switch (command) {
    case 'new': {
      const inbox = await client.createInbox({ username: stringFlag(flags.username), domain: stringFlag(flags.domain) });
      server.current = inbox.address;
      server.inboxes[inbox.address] ??= { returned: [] };
      save();
      print(inbox.address, { address: inbox.address, username: inbox.username, domain: inbox.domain, expires_at: inbox.expiresAt?.toISOString() });
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
  if (address === undefined) throw new TempInboxError(0, 'no_inbox', "No inbox yet: run 'tempinbox-client new' first (or pass --inbox ADDRESS).");
  const remembered = (server.inboxes[address] ??= { returned: [] });
  const inbox = client.inbox(address, { after: remembered.after, returned: remembered.returned });
  const waited = (message: Message) => {
    remembered.returned = inbox.returned;
    save();
    return message;
  };

  switch (command) {
    case 'address':
      print(address, { address });
      return;
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
      const limit = integerFlag(flags.limit, 'limit', 1, MAX_LIST_LIMIT) ?? DEFAULT_LIST_LIMIT;
      let shown = 0;
      for await (const message of inbox.messages()) {
        if (shown >= limit) break;
        print(`${message.id} ${message.date} ${message.from} ${message.subject}`, message);
        shown += 1;
      }
      return;
    }
    case 'read': {
      const message = await inbox.message(args[0] ?? '');
      const text = flags.html === true ? (message.html ?? '') : message.body;
      if (json) print('', message);
      else out.line(text.endsWith('\n') ? text.slice(0, -1) : text);
      return;
    }
    case 'raw':
      await out.bytes(await inbox.raw(args[0] ?? ''));
      return;
    case 'follow':
      await follow(inbox, filters, integerFlag(flags.count, 'count', 1, Number.MAX_SAFE_INTEGER), signal, print);
      return;
    case 'delete':
      await inbox.delete();
      print(`deleted ${address}`, { deleted: true, address });
      return;
    default:
      throw new UsageError(`Unknown command '${command ?? ''}'.`);
  }
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
