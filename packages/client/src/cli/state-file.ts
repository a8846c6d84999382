import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** Ids of returned messages kept per inbox: ten times the largest default inbox, so only long-gone ids drop out. */
const MAX_RETURNED_IDS = 10_000;
/** Inboxes remembered per server: the newest ones; a Premium license holds 10 active by default. */
const MAX_INBOXES_KEPT = 100;

/** What the CLI remembers of one inbox: its starting point and the ids its waits returned. */
export interface InboxState {
  after?: string;
  returned: string[];
}

/** What the CLI remembers of one server. */
export interface ServerState {
  session?: string;
  /** The inbox commands use by default: the last one `new` made. */
  current?: string;
  inboxes: Record<string, InboxState>;
}

/** The state file: per base URL, so that one file serves several servers. */
export interface StateFile {
  version: 1;
  servers: Record<string, ServerState>;
}

/** Where the state lives: --session-file, else TEMPINBOX_SESSION_FILE, else the XDG config folder. */
export function stateFilePath(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  if (flag !== undefined && flag !== '') return flag;
  if (env.TEMPINBOX_SESSION_FILE !== undefined && env.TEMPINBOX_SESSION_FILE !== '') return env.TEMPINBOX_SESSION_FILE;
  const config = env.XDG_CONFIG_HOME !== undefined && env.XDG_CONFIG_HOME !== '' ? env.XDG_CONFIG_HOME : join(homedir(), '.config');
  return join(config, 'tempinbox', 'session.json');
}

/** Reads the state (an empty one when the file does not exist). */
export function readState(path: string): StateFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, servers: {} };
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`The state file ${path} is not JSON; remove it to start over.`);
  }
  const state = parsed as Partial<StateFile>;
  if (state.version !== 1 || typeof state.servers !== 'object' || state.servers === null) {
    throw new Error(`The state file ${path} is not a tempinbox-client state file; remove it to start over.`);
  }
  return state as StateFile;
}

/**
 * Writes the state atomically (a temporary file renamed over it) with mode 0600 in a folder
 * made with mode 0700: it holds the session cookie, which reads every inbox of the session.
 */
export function writeState(path: string, state: StateFile): void {
  for (const server of Object.values(state.servers)) trim(server);
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, path);
}

/** The state of one server, created when missing. */
export function serverState(state: StateFile, baseUrl: string): ServerState {
  const key = baseUrl.replace(/\/+$/, '');
  state.servers[key] ??= { inboxes: {} };
  return state.servers[key];
}

function trim(server: ServerState): void {
  const names = Object.keys(server.inboxes);
  for (const name of names.slice(0, Math.max(0, names.length - MAX_INBOXES_KEPT))) {
    if (name !== server.current) delete server.inboxes[name];
  }
  for (const inbox of Object.values(server.inboxes)) {
    if (inbox.returned.length > MAX_RETURNED_IDS) inbox.returned = inbox.returned.slice(-MAX_RETURNED_IDS);
  }
}
