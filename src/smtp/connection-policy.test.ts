import { describe, expect, it } from 'vitest';
import {
  ConnectionPolicy,
  DEFAULT_CONNECTION_LIMITS,
  EVICTED,
  NETWORK_BUDGET_SPENT,
  SERVER_BUSY,
  TOO_MANY_CONNECTIONS,
  TOO_MANY_REFUSED,
  type RefusedRecipientBudgetPort,
} from './connection-policy.js';
import type { SmtpReply } from './replies.js';

/** A policy over fake connections and a fake monotonic clock; `closed` records who got which 421. */
function setup(options: { maxClients?: number; maxPerClient?: number; budget?: RefusedRecipientBudgetPort } = {}) {
  let time = 0;
  const closed = new Map<string, SmtpReply>();
  const errors: unknown[] = [];
  const policy = new ConnectionPolicy({
    limits: { ...DEFAULT_CONNECTION_LIMITS, maxClients: options.maxClients ?? 100 },
    maxPerClient: options.maxPerClient,
    budget: options.budget,
    onBudgetError: (error) => errors.push(error),
    now: () => time,
  });
  let next = 0;
  const open = async (remoteAddress: string): Promise<{ id: string; refusal: SmtpReply | null }> => {
    const id = `c${(next += 1)}`;
    time += 1;
    policy.register({ id, remoteAddress, close: (reply) => closed.set(id, reply) });
    return { id, refusal: await policy.admit(id) };
  };
  return { policy, closed, errors, open };
}

describe('ConnectionPolicy per-client limit', () => {
  it('counts every IPv6 address of one /64 as one client', async () => {
    const { open } = setup({ maxPerClient: 2 });
    expect((await open('2001:db8:5:6::1')).refusal).toBeNull();
    expect((await open('2001:db8:5:6::2')).refusal).toBeNull();
    expect((await open('2001:db8:5:6:ffff::9')).refusal).toEqual(TOO_MANY_CONNECTIONS);
    expect((await open('2001:db8:5:7::1')).refusal).toBeNull();
  });

  it('counts an IPv4-mapped IPv6 address as the IPv4 client, and other IPv4 addresses apart', async () => {
    const { open } = setup({ maxPerClient: 1 });
    expect((await open('192.0.2.7')).refusal).toBeNull();
    expect((await open('::ffff:192.0.2.7')).refusal).toEqual(TOO_MANY_CONNECTIONS);
    expect((await open('192.0.2.8')).refusal).toBeNull();
  });

  it('frees the slot when a connection is released', async () => {
    const { open, policy } = setup({ maxPerClient: 1 });
    const first = await open('192.0.2.7');
    policy.release(first.id);
    expect((await open('192.0.2.7')).refusal).toBeNull();
  });
});

describe('ConnectionPolicy slots for newcomers', () => {
  it('closes the oldest idle connection of the biggest network, skipping busy ones', async () => {
    const { open, policy, closed } = setup({ maxClients: 5 });
    const big = [await open('10.0.1.1'), await open('10.0.1.2'), await open('10.0.1.3')];
    await open('10.0.2.1');
    await open('10.0.2.2');
    // The oldest of the biggest network is busy (a delivery in progress): the next oldest goes.
    policy.begin(big[0]?.id ?? '');
    expect((await open('10.0.9.1')).refusal).toBeNull();
    expect([...closed.entries()]).toEqual([[big[1]?.id, EVICTED]]);
  });

  it('answers 421 4.4.5 when every slot is busy', async () => {
    const { open, policy, closed } = setup({ maxClients: 2 });
    for (const address of ['10.0.1.1', '10.0.2.1']) policy.begin((await open(address)).id);
    expect((await open('10.0.9.1')).refusal).toEqual(SERVER_BUSY);
    expect(closed.size).toBe(0);
  });
});

describe('ConnectionPolicy refused recipients', () => {
  it('ends the connection after the configured number, and when the network budget is spent', async () => {
    let left = 7;
    const budget: RefusedRecipientBudgetPort = {
      isSpent: () => Promise.resolve(left <= 0),
      record: () => Promise.resolve((left -= 1) >= 0),
    };
    const { open, policy } = setup({ budget });
    const { id } = await open('198.51.100.1');
    for (let i = 0; i < DEFAULT_CONNECTION_LIMITS.maxRefusedRecipients; i += 1) expect(await policy.refused(id)).toBeNull();
    expect(await policy.refused(id)).toEqual(TOO_MANY_REFUSED);
    const second = await open('198.51.100.2');
    expect(await policy.refused(second.id)).toBeNull();
    expect(await policy.refused(second.id)).toEqual(NETWORK_BUDGET_SPENT);
    expect((await open('198.51.100.3')).refusal).toEqual(NETWORK_BUDGET_SPENT);
  });

  it('lets connections through when the budget cannot be checked (database down), and reports it', async () => {
    const down = (): Promise<boolean> => Promise.reject(new Error('connect ECONNREFUSED'));
    const { open, policy, errors } = setup({ budget: { isSpent: down, record: down } });
    const { id, refusal } = await open('198.51.100.1');
    expect(refusal).toBeNull();
    expect(await policy.refused(id)).toBeNull();
    expect(errors).toHaveLength(2);
  });
});
