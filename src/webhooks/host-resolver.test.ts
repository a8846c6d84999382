import { describe, expect, it } from 'vitest';
import type { DnsLookup } from '../mail-auth/dns-answer-cache.js';
import { lookupHostResolver } from './host-resolver.js';

const fail = (code: string): Promise<never> => Promise.reject(Object.assign(new Error(code), { code }));

/** A fake DNS: answers per record type, as values or error codes. */
function fakeLookup(answers: Record<string, string[] | string>): DnsLookup {
  return (_name, rrtype) => {
    const answer = answers[rrtype];
    if (answer === undefined) return fail('ENODATA');
    return typeof answer === 'string' ? fail(answer) : Promise.resolve(answer);
  };
}

describe('lookupHostResolver', () => {
  it('asks A and AAAA and gives IPv4 first, without duplicates', async () => {
    const resolve = lookupHostResolver(fakeLookup({ A: ['192.0.2.1', '192.0.2.1'], AAAA: ['2001:db8::1'] }), 1000);
    expect(await resolve('hook.test', Number.POSITIVE_INFINITY)).toEqual({ kind: 'addresses', addresses: ['192.0.2.1', '2001:db8::1'] });
  });

  it('is not_found when both families say there is no such record', async () => {
    expect(await lookupHostResolver(fakeLookup({}), 1000)('hook.test', Number.POSITIVE_INFINITY)).toEqual({ kind: 'not_found' });
    expect(await lookupHostResolver(fakeLookup({ A: 'ENOTFOUND', AAAA: 'ENOTFOUND' }), 1000)('hook.test', Number.POSITIVE_INFINITY)).toEqual({ kind: 'not_found' });
  });

  it('uses the addresses of one family when the other fails (only checked addresses are ever connected to)', async () => {
    expect(await lookupHostResolver(fakeLookup({ A: ['192.0.2.1'], AAAA: 'ETIMEOUT' }), 1000)('hook.test', Number.POSITIVE_INFINITY)).toEqual({
      kind: 'addresses',
      addresses: ['192.0.2.1'],
    });
  });

  it('is failed, with the cause, when no family answered with addresses and one failed', async () => {
    expect(await lookupHostResolver(fakeLookup({ A: 'ESERVFAIL' }), 1000)('hook.test', Number.POSITIVE_INFINITY)).toEqual({ kind: 'failed', reason: 'ESERVFAIL' });
  });

  it('gives up at the sooner of its timeout and the caller\'s deadline', async () => {
    const never: DnsLookup = () => new Promise(() => undefined);
    let started = performance.now();
    expect(await lookupHostResolver(never, 50)('hook.test', Date.now() + 5000)).toEqual({ kind: 'failed', reason: 'ETIMEOUT' });
    expect(performance.now() - started).toBeLessThan(1000);
    started = performance.now();
    expect(await lookupHostResolver(never, 5000)('hook.test', Date.now() + 50)).toEqual({ kind: 'failed', reason: 'ETIMEOUT' });
    expect(performance.now() - started).toBeLessThan(1000);
    expect(await lookupHostResolver(never, 5000)('hook.test', Date.now() - 1)).toEqual({ kind: 'failed', reason: 'ETIMEOUT' });
  });
});
