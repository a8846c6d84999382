import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { StoreFailureError } from '../../src/ports/mail-store.js';
import { createSqliteStore } from '../../src/storage/sql/sqlite-store.js';
import { addInbox, at, deliverOne, makeAttachment } from './mail-store-fixtures.js';
import { countMessages } from '../helpers/store-reads.js';
import { runWebhookStoreContract } from './webhook-store-contract.js';

const root = mkdtempSync(join(tmpdir(), 'tempinbox-webhooks-'));
let fileNumber = 0;
const freshPath = (): string => join(root, `store-${(fileNumber += 1)}.db`);
afterAll(() => rmSync(root, { recursive: true, force: true }));

runWebhookStoreContract('sqlite file', () => Promise.resolve(createSqliteStore(freshPath())));

describe('SQLite webhook outbox', () => {
  it('writes no delivery when the message\'s transaction rolls back', async () => {
    const path = freshPath();
    const store = createSqliteStore(path);
    try {
      await store.migrate();
      const inbox = await addInbox(store);
      await store.webhooks.setWebhook({ inboxId: inbox.id, url: 'https://hooks.example.org/', secret: 'whsec_0123456789abcdef', createdAt: at(0) });
      // Break the schema behind the store's back: the delivery fails after its copy's INSERT.
      const other = new BetterSqlite3(path);
      other.exec('drop table attachments');
      other.close();
      await expect(deliverOne(store, inbox.id, { attachments: [makeAttachment(new Uint8Array([1]))] })).rejects.toBeInstanceOf(StoreFailureError);
      expect(await countMessages(store, inbox.id)).toBe(0);
      expect(await store.webhooks.claimDue(at(1000), 10, 1000)).toEqual([]);
      // And one that commits owes one.
      await deliverOne(store, inbox.id);
      expect(await store.webhooks.claimDue(at(1000), 10, 1000)).toHaveLength(1);
      const peek = new BetterSqlite3(path, { readonly: true });
      try {
        expect(peek.pragma('foreign_key_check')).toEqual([]);
      } finally {
        peek.close();
      }
    } finally {
      await store.close();
    }
  });
});
