import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DISK_CHECK_INTERVAL_MS, DiskSpaceMonitor } from './disk-space-monitor.js';

/** A fake disk whose free space the test sets, counting readings. */
function fakeDisk(initialFree: number) {
  let free = initialFree;
  let reads = 0;
  let time = 0;
  return {
    setFree: (bytes: number) => (free = bytes),
    advance: (ms: number) => (time += ms),
    reads: () => reads,
    now: () => time,
    read: () => {
      reads += 1;
      return Promise.resolve(free);
    },
  };
}

/** Lets the background refresh settle. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('DiskSpaceMonitor', () => {
  it('reads once per interval however many recipients ask, and follows the disk both ways', async () => {
    const disk = fakeDisk(5000);
    const monitor = new DiskSpaceMonitor({ path: '/x', minFreeBytes: 1000, now: disk.now, read: disk.read });
    const answers = await Promise.all(Array.from({ length: 100 }, () => monitor.hasRoom()));
    expect(answers.every((room) => room)).toBe(true);
    expect(disk.reads()).toBe(1);
    for (let i = 0; i < 1000; i += 1) await monitor.hasRoom();
    expect(disk.reads()).toBe(1);

    disk.setFree(999);
    disk.advance(DISK_CHECK_INTERVAL_MS);
    // The stale reading answers while the new one is taken in the background.
    expect(await monitor.hasRoom()).toBe(true);
    await settle();
    expect(await monitor.hasRoom()).toBe(false);
    expect(disk.reads()).toBe(2);

    disk.setFree(1000);
    disk.advance(DISK_CHECK_INTERVAL_MS);
    await monitor.hasRoom();
    await settle();
    expect(await monitor.hasRoom()).toBe(true);
  });

  it('keeps the last answer when a reading fails, and reports the failure', async () => {
    const errors: unknown[] = [];
    let time = 0;
    const monitor = new DiskSpaceMonitor({
      path: '/x',
      minFreeBytes: 1,
      now: () => time,
      read: () => Promise.reject(new Error('EIO')),
      onError: (error) => errors.push(error),
    });
    expect(await monitor.hasRoom()).toBe(true);
    time += DISK_CHECK_INTERVAL_MS;
    await monitor.hasRoom();
    await settle();
    expect(errors).toHaveLength(2);
  });

  it('reads the real free space of a folder with statfs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tempinbox-statfs-'));
    try {
      expect(await new DiskSpaceMonitor({ path: dir, minFreeBytes: 1 }).hasRoom()).toBe(true);
      expect(await new DiskSpaceMonitor({ path: dir, minFreeBytes: Number.MAX_SAFE_INTEGER }).hasRoom()).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
