import { readFileSync } from 'node:fs';
import { CONFIG_SCHEMA, type Config, type ConfigEntry } from './schema.js';

/** One problem with one variable, as printed at start. */
export interface ConfigProblem {
  env: string;
  value: string;
  expected: string;
}

/** Formats a problem as the single line docs/configuration.md asks for. */
export function formatConfigProblem(problem: ConfigProblem): string {
  return `invalid configuration: ${problem.env}=${JSON.stringify(problem.value)}: expected ${problem.expected}`;
}

/** Thrown by loadConfig with every problem found, so all are reported at once. */
export class ConfigError extends Error {
  readonly problems: ConfigProblem[];

  constructor(problems: ConfigProblem[]) {
    super(problems.map(formatConfigProblem).join('\n'));
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/**
 * Validates the environment against CONFIG_SCHEMA. Variables that are unset (or set to the
 * empty string for optional ones) take their defaults. Throws ConfigError listing all problems.
 */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const values: Partial<Config> = {};
  const problems: ConfigProblem[] = [];
  for (const entry of CONFIG_SCHEMA) readVariable(entry, env, values, problems);
  // Each variable is either read or has a problem: values is incomplete only with problems.
  if (problems.length > 0 || !isComplete(values)) throw new ConfigError(problems);
  problems.push(...crossChecks(values));
  if (problems.length > 0) throw new ConfigError(problems);
  return values;
}

/**
 * Parses one variable into `values` under its key, or records why it cannot. Generic in the
 * key, so that only a value of that key's own type can be written under it.
 */
function readVariable<K extends keyof Config>(
  entry: ConfigEntry<K, Config[K]>,
  env: Record<string, string | undefined>,
  values: Partial<Config>,
  problems: ConfigProblem[],
): void {
  const raw = env[entry.env];
  // An optional variable set to '' counts as unset (e.g. `PUBLIC_URL=` in a unit file).
  const text = raw === '' && entry.defaultText === undefined ? undefined : (raw ?? entry.defaultText);
  if (text === undefined) {
    values[entry.key] = undefined;
    return;
  }
  const result = entry.parse(text);
  if (result.ok) values[entry.key] = result.value;
  else problems.push({ env: entry.env, value: text, expected: result.expected });
}

/** True when every variable of the schema was read: a value, or undefined for an unset optional one. */
function isComplete(values: Partial<Config>): values is Config {
  return CONFIG_SCHEMA.every((entry) => entry.key in values);
}

/**
 * Checks that involve the file system or several variables. The database is not opened
 * here: the store reports a path it cannot create or open at start, as one DATABASE_URL line.
 */
function crossChecks(config: Config): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if ((config.tlsCertFile === undefined) !== (config.tlsKeyFile === undefined)) {
    const missing = config.tlsCertFile === undefined ? 'TLS_CERT_FILE' : 'TLS_KEY_FILE';
    problems.push({ env: missing, value: '', expected: 'TLS_CERT_FILE and TLS_KEY_FILE set together' });
  }
  for (const [env, file] of [['TLS_CERT_FILE', config.tlsCertFile], ['TLS_KEY_FILE', config.tlsKeyFile]] as const) {
    if (file === undefined) continue;
    try {
      if (!readFileSync(file, 'utf8').includes('-----BEGIN')) {
        problems.push({ env, value: file, expected: 'a readable PEM file' });
      }
    } catch {
      problems.push({ env, value: file, expected: 'a readable PEM file' });
    }
  }
  return problems;
}

/** The base URL used for links and the cookie's Secure flag. */
export function publicUrlOf(config: Config): string {
  return config.publicUrl ?? `http://localhost:${config.port}`;
}

/** The configuration of this process: the one place that reads process.env. */
export function loadConfigFromEnvironment(): Config {
  return loadConfig(process.env);
}
