import type { MailStore } from '../ports/mail-store.js';
import { createSqliteStore } from './sql/sqlite-store.js';

/**
 * The store a DATABASE_URL names. `sqlite:<path>` and `sqlite::memory:` are served here;
 * PostgreSQL URLs pass config validation but are refused until the PostgreSQL backend lands
 * (the same SqlMailStore with the pg dialect), with a message that says so.
 */
export function openStore(databaseUrl: string): MailStore {
  if (databaseUrl.startsWith('sqlite:')) {
    const path = databaseUrl.slice('sqlite:'.length);
    return createSqliteStore(path);
  }
  throw new Error('PostgreSQL (postgres://) is not supported by this build yet; use sqlite:<path>');
}
