import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreUnavailableError, type MailStore } from '../../src/ports/mail-store.js';
import { describeExpiryContract } from './expiry-contract.js';
import { describeFilterContract } from './filter-contract.js';
import { describeInboxContract } from './inbox-contract.js';
import { describeInsightsContract } from './insights-contract.js';
import { describeLimitsContract } from './limits-contract.js';
import { addInbox, at, deliverOne } from './mail-store-fixtures.js';
import { InProcessInboxEvents } from '../../src/events/in-process-inbox-events.js';
import { describeLiveContract, type EventPair, type EventPairFactory } from './live-contract.js';
import { describeMessageContract } from './message-contract.js';
import { describeMessagePageContract } from './message-page-contract.js';
import { describePollContract } from './poll-contract.js';
import { describeSessionLicenseContract } from './session-license-contract.js';
import { describeUsageContract, type OverwriteUsage } from './usage-contract.js';
import { listMessages } from '../helpers/store-reads.js';

/**
 * The one contract every MailStore passes (docs/architecture.md: one port, one suite, every
 * backend). Each test gets a fresh, migrated store from `makeStore` and closes it afterwards.
 * `overwriteUsage` reaches behind the port to corrupt the usage counters for recountUsage's
 * test (skipped without it).
 */
export function runMailStoreContract(
  name: string,
  makeStore: () => Promise<MailStore>,
  makeEvents: EventPairFactory = inProcessEvents,
  overwriteUsage?: OverwriteUsage,
): void {
  describe(`MailStore contract: ${name}`, () => {
    let current: MailStore | undefined;
    const store = (): MailStore => {
      if (current === undefined) throw new Error('no store: beforeEach did not run');
      return current;
    };

    beforeEach(async () => {
      current = await makeStore();
      await current.migrate();
    });

    afterEach(async () => {
      await current?.close();
      current = undefined;
    });

    describeInsightsContract(store);

    describe('lifecycle', () => {
      it('migrate() again is harmless and keeps the data', async () => {
        const inbox = await addInbox(store());
        const messageId = await deliverOne(store(), inbox.id);
        await store().migrate();
        await store().migrate();
        expect(await store().findInboxById(inbox.id)).toEqual(inbox);
        expect((await store().findMessage(messageId))?.id).toBe(messageId);
      });

      it('ping() resolves on a working store', async () => {
        await expect(store().ping()).resolves.toBeUndefined();
      });

      it('a closed store refuses work with StoreUnavailableError, and closing again is harmless', async () => {
        await store().close();
        await expect(store().ping()).rejects.toBeInstanceOf(StoreUnavailableError);
        await expect(store().findInboxById('x')).rejects.toBeInstanceOf(StoreUnavailableError);
        await expect(listMessages(store(), 'x')).rejects.toBeInstanceOf(StoreUnavailableError);
        await expect(store().deleteExpired(at(0), 10)).rejects.toBeInstanceOf(StoreUnavailableError);
        await expect(store().close()).resolves.toBeUndefined();
      });
    });

    describeSessionLicenseContract(store);
    describeInboxContract(store);
    describeMessageContract(store);
    describeMessagePageContract(store);
    describePollContract(store);
    describeExpiryContract(store);
    describeLimitsContract(store);
    describeUsageContract(store, overwriteUsage);
    describeLiveContract(store, makeEvents);
    describeFilterContract(store);
  });
}

/** One node's bus: waiters and the writer share it. */
async function inProcessEvents(): Promise<EventPair> {
  const bus = new InProcessInboxEvents();
  await bus.start();
  return { listener: bus, publisher: bus, close: () => bus.close() };
}
