import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { StoreFailureError } from '../../ports/mail-store.js';
import { createSqliteStore } from './sqlite-store.js';
import { listMessages } from '../../../test/helpers/store-reads.js';

const root = mkdtempSync(join(tmpdir(), 'tempinbox-group-commit-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const NOW = new Date(Date.UTC(2030, 0, 1));
/** No quota in reach: these tests are about commits, not limits. */
const UNCAPPED = { maxMessages: 1_000_000, maxBytes: 1024 ** 3 };
const POLICY = { now: NOW, free: UNCAPPED, premium: UNCAPPED };

function mail(n: number) {
  const raw = new TextEncoder().encode(`Subject: ${n}\r\n\r\nbody ${n}\r\n`);
  return {
    envelopeFrom: 'a@example.org',
    receivedAt: NOW,
    raw,
    parsed: { from: '', to: '', subject: String(n), text: `body ${n}`, html: null, headers: [], messageId: null, attachments: [], codes: [], links: [] },
  };
}

async function storeWithInbox(name: string) {
  const path = join(root, `${name}.db`);
  const store = createSqliteStore(path);
  await store.migrate();
  const inbox = { id: `inbox-${name}`.padEnd(22, 'x'), username: name, domain: 'tempinbox.test', createdAt: NOW, expiresAt: new Date(NOW.getTime() + 3_600_000), sessionId: null, licenseId: null };
  await store.insertInbox(inbox, NOW);
  return { path, store, inbox };
}

describe('SQLite store: group commit of messages', () => {
  it('resolves each of many concurrent deliveries only once its message is committed', async () => {
    const { path, store, inbox } = await storeWithInbox('many');
    // A second connection sees only committed data: each message must be there on resolve.
    const reader = new BetterSqlite3(path, { readonly: true });
    const exists = reader.prepare('select count(*) from messages where id = ?').pluck();
    try {
      const seen = await Promise.all(
        Array.from({ length: 100 }, async (_, n) => {
          const ids = await store.insertMessage(mail(n), [inbox.id], POLICY);
          const outcome = ids.get(inbox.id);
          return Number(exists.get(outcome?.status === 'stored' ? outcome.messageId : ''));
        }),
      );
      expect(seen).toEqual(Array.from({ length: 100 }, () => 1));
      // Newest first, in the order the deliveries were made.
      const subjects = (await listMessages(store, inbox.id)).map((message) => message.subject);
      expect(subjects).toEqual(Array.from({ length: 100 }, (_, n) => String(99 - n)));
    } finally {
      reader.close();
      await store.close();
    }
  });

  it('rejects every caller of a failed group with the store error of its cause (a missing table: StoreFailureError, SMTP 451)', async () => {
    const { path, store, inbox } = await storeWithInbox('failing');
    const saboteur = new BetterSqlite3(path);
    saboteur.exec('drop index messages_content_id; drop table messages');
    saboteur.close();
    try {
      const results = await Promise.allSettled(Array.from({ length: 5 }, (_, n) => store.insertMessage(mail(n), [inbox.id], POLICY)));
      for (const result of results) {
        expect(result.status).toBe('rejected');
        if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(StoreFailureError);
      }
    } finally {
      await store.close();
    }
  });

  it('commits what is queued before close() closes the database', async () => {
    const { path, store, inbox } = await storeWithInbox('closing');
    const pending = Promise.all(Array.from({ length: 10 }, (_, n) => store.insertMessage(mail(n), [inbox.id], POLICY)));
    await store.close();
    await expect(pending).resolves.toHaveLength(10);
    const reader = new BetterSqlite3(path, { readonly: true });
    expect(reader.prepare('select count(*) from messages').pluck().get()).toBe(10);
    reader.close();
  });
});
