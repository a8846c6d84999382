import { describe, expect, it } from 'vitest';
import type { MailStore, RecountQuery } from '../ports/mail-store.js';
import { recountAllUsage } from './usage-recount.js';

/** recountUsage over inboxes with these ids (sorted), the `wrong` ones corrected once; records each query. */
function fakeStore(ids: string[], wrong: Set<string>): Pick<MailStore, 'recountUsage'> & { queries: RecountQuery[] } {
  const sorted = [...ids].sort();
  const queries: RecountQuery[] = [];
  return {
    queries,
    recountUsage: (query) => {
      queries.push(query);
      const batch = sorted.filter((id) => query.afterId === undefined || id > query.afterId).slice(0, query.limit);
      const corrected = batch.filter((id) => wrong.delete(id)).length;
      return Promise.resolve({ checked: batch.length, corrected, lastId: batch.at(-1) });
    },
  };
}

describe('recountAllUsage', () => {
  it('walks every inbox once, batch after batch from the last id, and adds up the corrections', async () => {
    const store = fakeStore(['g', 'a', 'c', 'b', 'e', 'd', 'f'], new Set(['a', 'd', 'g']));
    expect(await recountAllUsage(store, 3)).toEqual({ checked: 7, corrected: 3 });
    expect(store.queries).toEqual([{ limit: 3 }, { afterId: 'c', limit: 3 }, { afterId: 'f', limit: 3 }]);
  });

  it('ends on the empty batch after a last full one, and at once on no inboxes', async () => {
    const store = fakeStore(['a', 'b', 'c', 'd'], new Set());
    expect(await recountAllUsage(store, 2)).toEqual({ checked: 4, corrected: 0 });
    expect(store.queries).toEqual([{ limit: 2 }, { afterId: 'b', limit: 2 }, { afterId: 'd', limit: 2 }]);
    const empty = fakeStore([], new Set());
    expect(await recountAllUsage(empty)).toEqual({ checked: 0, corrected: 0 });
    expect(empty.queries).toEqual([{ limit: 1000 }]);
  });
});
