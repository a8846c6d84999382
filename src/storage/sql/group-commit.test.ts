import { describe, expect, it } from 'vitest';
import { GroupCommitQueue } from './group-commit.js';

/** A commit whose completion the test controls, recording every group it was given. */
function controlledCommit() {
  const groups: string[][] = [];
  const pending: Array<{ finish: () => void; fail: (error: Error) => void }> = [];
  const commit = (items: readonly string[]): Promise<string[]> => {
    groups.push([...items]);
    return new Promise<string[]>((resolve, reject) => {
      pending.push({ finish: () => resolve(items.map((item) => `stored ${item}`)), fail: reject });
    });
  };
  return { groups, pending, commit };
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe('GroupCommitQueue', () => {
  it('commits what arrives in one turn together, in order, and gives each caller its own result', async () => {
    const { groups, pending, commit } = controlledCommit();
    const queue = new GroupCommitQueue(commit);
    const results = Promise.all(['a', 'b', 'c'].map((item) => queue.push(item)));
    await turn();
    expect(groups).toEqual([['a', 'b', 'c']]);
    pending[0]?.finish();
    expect(await results).toEqual(['stored a', 'stored b', 'stored c']);
  });

  it('resolves a caller only after the commit holding its item has finished', async () => {
    const { pending, commit } = controlledCommit();
    const queue = new GroupCommitQueue(commit);
    let resolved = false;
    const done = queue.push('a').then(() => (resolved = true));
    await turn();
    await turn();
    expect(resolved).toBe(false);
    pending[0]?.finish();
    await done;
    expect(resolved).toBe(true);
  });

  it('gathers what arrives during a commit into the next group', async () => {
    const { groups, pending, commit } = controlledCommit();
    const queue = new GroupCommitQueue(commit);
    const first = queue.push('a');
    await turn();
    const later = [queue.push('b'), queue.push('c')];
    await turn();
    expect(groups).toEqual([['a']]);
    pending[0]?.finish();
    await first;
    // The next group is scheduled once the first commit has settled: a turn after that.
    await turn();
    await turn();
    expect(groups).toEqual([['a'], ['b', 'c']]);
    pending[1]?.finish();
    expect(await Promise.all(later)).toEqual(['stored b', 'stored c']);
  });

  it('bounds a group at maxItems', async () => {
    const { groups, pending, commit } = controlledCommit();
    const queue = new GroupCommitQueue(commit, 2);
    const all = Promise.all(['a', 'b', 'c'].map((item) => queue.push(item)));
    await turn();
    pending[0]?.finish();
    await turn();
    await turn();
    pending[1]?.finish();
    await all;
    expect(groups).toEqual([['a', 'b'], ['c']]);
  });

  it('retries a failed group item by item, so only the bad item is refused', async () => {
    const queue = new GroupCommitQueue<string, string>((items) =>
      items.includes('bad') ? Promise.reject(new Error('constraint')) : Promise.resolve(items.map((item) => `stored ${item}`)),
    );
    const results = await Promise.allSettled(['a', 'bad', 'b'].map((item) => queue.push(item)));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(results[0]).toEqual({ status: 'fulfilled', value: 'stored a' });
  });

  it('rejects every caller when the backend fails, with its error', async () => {
    const down = new Error('disk I/O error');
    const queue = new GroupCommitQueue<string, string>(() => Promise.reject(down));
    const results = await Promise.allSettled(['a', 'b'].map((item) => queue.push(item)));
    expect(results).toEqual([
      { status: 'rejected', reason: down },
      { status: 'rejected', reason: down },
    ]);
  });

  it('drain() waits until everything queued is committed', async () => {
    const { pending, commit } = controlledCommit();
    const queue = new GroupCommitQueue(commit);
    const pushed = queue.push('a');
    let drained = false;
    const draining = queue.drain().then(() => (drained = true));
    await turn();
    expect(drained).toBe(false);
    pending[0]?.finish();
    await draining;
    expect(await pushed).toBe('stored a');
  });
});
