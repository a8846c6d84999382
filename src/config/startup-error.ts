/**
 * A start-up failure caused by one configuration variable: the database DATABASE_URL names,
 * a port that is taken, a TLS file that is not a usable certificate or key. The CLI prints
 * it as one line naming the variable, its value and what was expected (docs/configuration.md).
 */
export class StartupError extends Error {
  constructor(
    readonly variable: string,
    readonly value: string,
    readonly expected: string,
    cause: unknown,
  ) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(`${variable}=${JSON.stringify(value)}: expected ${expected} (${reason})`, { cause });
    this.name = 'StartupError';
  }
}

/** A postgres:// URL with its password masked: start-up errors end up in logs. */
export function withoutPassword(databaseUrl: string): string {
  if (databaseUrl.startsWith('sqlite:')) return databaseUrl;
  try {
    const url = new URL(databaseUrl);
    if (url.password !== '') url.password = '***';
    return url.toString();
  } catch {
    return databaseUrl.replace(/:[^:@/]*@/, ':***@');
  }
}

/** The start-up failure of a database that could not be opened, reached or migrated. */
export function databaseStartupError(databaseUrl: string, cause: unknown): StartupError {
  return new StartupError('DATABASE_URL', withoutPassword(databaseUrl), 'a reachable, writable database', cause);
}
