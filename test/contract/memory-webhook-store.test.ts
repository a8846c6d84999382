import { MemoryMailStore } from '../../src/storage/memory/memory-mail-store.js';
import { runWebhookStoreContract } from './webhook-store-contract.js';

runWebhookStoreContract('memory', () => Promise.resolve(new MemoryMailStore()));
