import { readFileSync } from 'node:fs';
import { CONFIG_SCHEMA, type Config } from './schema.js';

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
  const values: Record<string, unknown> = {};
  const problems: ConfigProblem[] = [];
  for (const entry of CONFIG_SCHEMA) {
    const raw = env[entry.env];
    // An optional variable set to '' counts as unset (e.g. `PUBLIC_URL=` in a unit file).
    const text = raw === '' && entry.defaultText === undefined ? undefined : (raw ?? entry.defaultText);
    if (text === undefined) {
      values[entry.key] = undefined;
      continue;
    }
    const result = entry.parse(text);
    if (result.ok) values[entry.key] = result.value;
    else problems.push({ env: entry.env, value: text, expected: result.expected });
  }
  const config = values as unknown as Config;
  if (problems.length === 0) problems.push(...crossChecks(config));
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
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
