import { MemoryMailStore } from '../../src/storage/memory/memory-mail-store.js';
import { runMailStoreContract } from './mail-store-contract.js';

runMailStoreContract('memory', () => Promise.resolve(new MemoryMailStore()), undefined, (store, inboxId, usage) => {
  if (!(store instanceof MemoryMailStore)) throw new Error('a MemoryMailStore expected');
  store.overwriteStoredUsage(inboxId, usage);
  return Promise.resolve();
});
