import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { Inbox } from '../../src/domain/types.js';
import { createSqliteStore } from '../../src/storage/sql/sqlite-store.js';
import { addInbox, at, deliver, deliverOne } from '../contract/mail-store-fixtures.js';
import { sendWithNodemailer } from '../helpers/send-mail.js';
import { runBin, startServer, tempDataDir } from '../helpers/server-process.js';

/** Stored and counted usage of every inbox of the file, by id. */
function usageRows(path: string): { id: string; stored: [number, number]; counted: [number, number] }[] {
  const peek = new BetterSqlite3(path, { readonly: true });
  try {
    const rows = peek
      .prepare(
        `select i.id, i.message_count, i.byte_count, count(m.id) as n, coalesce(sum(c.size), 0) as bytes
         from inboxes i left join messages m on m.inbox_id = i.id left join contents c on c.id = m.content_id
         group by i.id order by i.id`,
      )
      .all() as { id: string; message_count: number; byte_count: number; n: number; bytes: number }[];
    return rows.map((row) => ({ id: row.id, stored: [row.message_count, row.byte_count], counted: [row.n, row.bytes] }));
  } finally {
    peek.close();
  }
}

/** Sets inboxes' counters behind the store's back, as a node of a release before them leaves them. */
function corrupt(path: string, inboxes: readonly Inbox[]): void {
  const raw = new BetterSqlite3(path, { timeout: 5000 });
  try {
    const update = raw.prepare('update inboxes set message_count = message_count + ?, byte_count = byte_count + ? where id = ?');
    inboxes.forEach((inbox, i) => update.run(i % 2 === 0 ? 2 : -1, 100 + i, inbox.id));
  } finally {
    raw.close();
  }
}

/** A migrated SQLite file with `count` inboxes holding mail (the first two share a message). */
async function seed(path: string, count: number): Promise<Inbox[]> {
  const store = createSqliteStore(path);
  try {
    await store.migrate();
    const inboxes: Inbox[] = [];
    for (let i = 0; i < count; i += 1) inboxes.push(await addInbox(store, { expiresAt: at(60) }));
    const [first, second] = inboxes;
    if (first !== undefined && second !== undefined) await deliver(store, [first.id, second.id], { raw: new Uint8Array(300) });
    for (const [i, inbox] of inboxes.entries()) if (i % 3 !== 2) await deliverOne(store, inbox.id, { raw: new Uint8Array(40 + i) });
    return inboxes;
  } finally {
    await store.close();
  }
}

describe('`tempinbox recount-usage`', () => {
  it('sets the counters an earlier release left wrong in a SQLite file, prints one line, and finds nothing the second time', async () => {
    const data = tempDataDir();
    const path = join(data.dir, 'tempinbox.db');
    try {
      const inboxes = await seed(path, 6);
      corrupt(path, inboxes.slice(0, 4));
      expect(usageRows(path).filter((row) => row.stored.join() !== row.counted.join())).toHaveLength(4);

      const run = await runBin(['recount-usage'], { DATABASE_URL: data.databaseUrl });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toBe('recounted 6 inboxes, corrected 4\n');
      expect(run.stderr).toBe('');
      const rows = usageRows(path);
      expect(rows).toHaveLength(6);
      for (const row of rows) expect(row.stored, row.id).toEqual(row.counted);
      expect(rows.find((row) => row.id === inboxes[0]?.id)?.stored).toEqual([2, 340]);

      const again = await runBin(['recount-usage'], { DATABASE_URL: data.databaseUrl });
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toBe('recounted 6 inboxes, corrected 0\n');
    } finally {
      data.cleanup();
    }
  });

  it('runs while the server serves the same file and takes mail, and leaves every counter exact', async () => {
    const data = tempDataDir();
    const path = join(data.dir, 'tempinbox.db');
    const inboxes = await seed(path, 5);
    corrupt(path, inboxes);
    const server = await startServer({ DATABASE_URL: data.databaseUrl });
    try {
      const mail = Promise.all(
        inboxes.map((inbox, i) => sendWithNodemailer(server.smtpPort, { to: `${inbox.username}@${inbox.domain}`, subject: `during ${i}`, text: 'x'.repeat(50 + i) })),
      );
      const run = await runBin(['recount-usage'], { DATABASE_URL: data.databaseUrl });
      for (const reply of await mail) expect(reply).toMatch(/^250 /);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toBe('recounted 5 inboxes, corrected 5\n');
      for (const row of usageRows(path)) expect(row.stored, row.id).toEqual(row.counted);
      expect(usageRows(path).reduce((sum, row) => sum + row.counted[0], 0)).toBe(2 + 4 + inboxes.length);
    } finally {
      await server.stop();
      data.cleanup();
    }
  });

  it('exits 1 with one line when the database cannot be opened', async () => {
    const data = tempDataDir();
    try {
      // A folder where the file should be.
      const run = await runBin(['recount-usage'], { DATABASE_URL: `sqlite:${data.dir}` });
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(run.stderr.trim().split('\n')).toHaveLength(1);
      expect(run.stderr).toMatch(/^cannot start: /);
    } finally {
      data.cleanup();
    }
  });
});
