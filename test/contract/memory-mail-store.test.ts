import { MemoryMailStore } from '../../src/storage/memory/memory-mail-store.js';
import { runMailStoreContract } from './mail-store-contract.js';

runMailStoreContract('memory', () => Promise.resolve(new MemoryMailStore()));
