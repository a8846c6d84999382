import { randomBytes } from 'node:crypto';
import BetterSqlite3 from 'better-sqlite3';

/** Recipient base for smtp-source -N: message n goes to `<n>bench@<domain>`. */
export const RECIPIENT_LOCAL = 'bench';
/** The service's default domain (DOMAINS is left at its default). */
export const DOMAIN = 'tempinbox.test';

/** What the load figures need from the database behind the service, besides the service. */
export interface BenchDb {
  /** Makes sure the inboxes `1bench` … `<count>bench` exist, active for a day. */
  ensureRecipients(count: number): Promise<void>;
  /** Messages stored in all (to check that what was answered 250 is what was stored). */
  countMessages(): Promise<number>;
  close(): Promise<void>;
}

/** An id shaped like the service's (22 chars base64url). */
export function benchId(): string {
  return randomBytes(16).toString('base64url');
}

/**
 * BenchDb on the service's SQLite file, through a second connection (WAL lets it read and,
 * between runs, write next to the server). The recipients are inserted directly: free
 * inboxes cannot choose their names over the API, and smtp-source numbers its recipients.
 */
export function openSqliteBenchDb(path: string): BenchDb {
  const db = new BetterSqlite3(path, { timeout: 30_000 });
  let seeded = 0;
  const insert = db.prepare(
    `insert or ignore into inboxes (id, username, domain, created_at, expires_at, session_id, license_id)
     values (?, ?, ?, ?, ?, null, null)`,
  );
  const count = db.prepare('select count(*) as n from messages').pluck();
  return {
    ensureRecipients(wanted: number): Promise<void> {
      if (wanted <= seeded) return Promise.resolve();
      const now = Date.now();
      db.transaction(() => {
        for (let n = seeded + 1; n <= wanted; n += 1) insert.run(benchId(), `${n}${RECIPIENT_LOCAL}`, DOMAIN, now, now + 86_400_000);
      })();
      seeded = wanted;
      return Promise.resolve();
    },
    countMessages: () => Promise.resolve(Number(count.get())),
    close: () => {
      db.close();
      return Promise.resolve();
    },
  };
}
