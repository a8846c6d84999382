import { describe, expect, it } from 'vitest';
import { deadlineResolver } from './deadline-resolver.js';
import { DnsAnswerCache, type DnsLookup } from './dns-answer-cache.js';

function counting(answer: (name: string) => Promise<unknown>): { lookup: DnsLookup; calls: string[] } {
  const calls: string[] = [];
  return { calls, lookup: (name, rrtype) => (calls.push(`${rrtype} ${name}`), answer(name)) };
}

const coded = (code: string) => Object.assign(new Error(code), { code });

describe('DnsAnswerCache', () => {
  it('keeps answers and "does not exist" for its TTL, case-insensitively, then asks again', async () => {
    let now = 0;
    const { lookup, calls } = counting((name) => (name.startsWith('no') ? Promise.reject(coded('ENOTFOUND')) : Promise.resolve([['v=spf1 -all']])));
    const cache = new DnsAnswerCache(lookup, () => now, 1000, 10);
    expect(await cache.resolve('a.test', 'TXT')).toEqual([['v=spf1 -all']]);
    expect(await cache.resolve('A.TEST', 'TXT')).toEqual([['v=spf1 -all']]);
    await expect(cache.resolve('no.test', 'TXT')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    await expect(cache.resolve('no.test', 'TXT')).rejects.toMatchObject({ code: 'ENOTFOUND' });
    expect(calls).toEqual(['TXT a.test', 'TXT no.test']);
    now = 1000;
    await cache.resolve('a.test', 'TXT');
    expect(calls).toEqual(['TXT a.test', 'TXT no.test', 'TXT a.test']);
  });

  it('never keeps a failure (timeout, SERVFAIL): the next message asks again', async () => {
    const { lookup, calls } = counting(() => Promise.reject(coded('ETIMEOUT')));
    const cache = new DnsAnswerCache(lookup, () => 0, 1000, 10);
    await expect(cache.resolve('slow.test', 'TXT')).rejects.toMatchObject({ code: 'ETIMEOUT' });
    await expect(cache.resolve('slow.test', 'TXT')).rejects.toMatchObject({ code: 'ETIMEOUT' });
    expect(calls).toHaveLength(2);
  });

  it('holds at most maxEntries, dropping the oldest', async () => {
    const { lookup, calls } = counting((name) => Promise.resolve([[name]]));
    const cache = new DnsAnswerCache(lookup, () => 0, 1000, 3);
    for (const name of ['a', 'b', 'c', 'd']) await cache.resolve(name, 'TXT');
    expect(cache.size).toBe(3);
    await cache.resolve('a', 'TXT');
    expect(calls).toEqual(['TXT a', 'TXT b', 'TXT c', 'TXT d', 'TXT a']);
  });
});

describe('deadlineResolver', () => {
  it('fails look-ups pending at the deadline, and every later one at once, with ETIMEOUT', async () => {
    const never: DnsLookup = () => new Promise(() => undefined);
    const started = Date.now();
    const resolve = deadlineResolver(never, started + 50);
    await expect(resolve('a.test', 'TXT')).rejects.toMatchObject({ code: 'ETIMEOUT' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    const after = Date.now();
    await expect(resolve('b.test', 'TXT')).rejects.toMatchObject({ code: 'ETIMEOUT' });
    expect(Date.now() - after).toBeLessThan(20);
  });

  it('passes answers and errors through before the deadline', async () => {
    const resolve = deadlineResolver((name) => (name === 'x' ? Promise.resolve([['ok']]) : Promise.reject(coded('ENODATA'))), Date.now() + 10_000);
    expect(await resolve('x', 'TXT')).toEqual([['ok']]);
    await expect(resolve('y', 'TXT')).rejects.toMatchObject({ code: 'ENODATA' });
  });
});
