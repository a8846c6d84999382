import { describe, expect, it } from 'vitest';
import { SharedReads } from './shared-reads.js';

/** A read whose answer the test releases, counting how often it was started. */
function gatedRead() {
  const gate = { started: 0, release: (_value: string) => undefined as void, fail: (_error: Error) => undefined as void };
  const read = () => {
    gate.started += 1;
    return new Promise<string>((resolve, reject) => {
      gate.release = resolve;
      gate.fail = reject;
    });
  };
  return { gate, read };
}

describe('SharedReads', () => {
  it('runs one read for callers that ask the same question with the same mark', async () => {
    const reads = new SharedReads();
    const { gate, read } = gatedRead();
    const answers = [reads.read('k', reads.mark, read), reads.read('k', reads.mark, read), reads.read('k', reads.mark, read)];
    gate.release('answer');
    expect(await Promise.all(answers)).toEqual(['answer', 'answer', 'answer']);
    expect(gate.started).toBe(1);
    expect(reads.size).toBe(0);
  });

  it('never hands a caller woken after a read started that older read', async () => {
    const reads = new SharedReads();
    const older = gatedRead();
    const first = reads.read('k', reads.mark, older.read);
    // An event arrives while the first read is in flight: whoever it wakes must read again.
    reads.woke();
    const newer = gatedRead();
    const second = reads.read('k', reads.mark, newer.read);
    // A caller woken by the same event joins the newer read, not the older one.
    const third = reads.read('k', reads.mark, newer.read);
    older.gate.release('before the event');
    newer.gate.release('after the event');
    expect(await first).toBe('before the event');
    expect(await second).toBe('after the event');
    expect(await third).toBe('after the event');
    expect(newer.gate.started).toBe(1);
  });

  it('lets a caller woken earlier join a read that started later', async () => {
    const reads = new SharedReads();
    const mark = reads.mark;
    reads.woke();
    const { gate, read } = gatedRead();
    const started = reads.read('k', reads.mark, read);
    const joined = reads.read('k', mark, read);
    gate.release('fresh');
    expect([await started, await joined]).toEqual(['fresh', 'fresh']);
    expect(gate.started).toBe(1);
  });

  it('keeps different questions apart, and forgets a read once it failed', async () => {
    const reads = new SharedReads();
    const a = gatedRead();
    const b = gatedRead();
    const readA = reads.read('a', reads.mark, a.read);
    const readB = reads.read('b', reads.mark, b.read);
    const joinedA = reads.read('a', reads.mark, a.read);
    expect(reads.size).toBe(2);
    a.gate.fail(new Error('store down'));
    b.gate.release('b');
    await expect(readA).rejects.toThrow('store down');
    await expect(joinedA).rejects.toThrow('store down');
    expect(await readB).toBe('b');
    expect(reads.size).toBe(0);
    const again = gatedRead();
    const retried = reads.read('a', reads.mark, again.read);
    again.gate.release('recovered');
    expect(await retried).toBe('recovered');
  });
});
