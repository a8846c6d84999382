import { statfs } from 'node:fs/promises';
import type { StorageCapacity } from '../ports/storage-capacity.js';

/**
 * How long one free-space reading is trusted. Short enough that RCPT refusals start and stop
 * within seconds of the disk filling or being freed; long enough that a flood of RCPTs costs at
 * most one statfs per interval, never one per command.
 */
export const DISK_CHECK_INTERVAL_MS = 2000;

/** Free bytes of the file system holding `path` (available to this unprivileged process). */
export type FreeSpaceReader = (path: string) => Promise<number>;

/** statfs(2) through libuv's thread pool: the event loop never waits for it. */
const readFreeSpace: FreeSpaceReader = async (path) => {
  const stats = await statfs(path);
  return stats.bavail * stats.bsize;
};

/** What the monitor needs. */
export interface DiskSpaceMonitorOptions {
  /** A path on the database's file system (its folder). */
  path: string;
  /** MIN_FREE_DISK_BYTES: below this, no room. */
  minFreeBytes: number;
  /** Reports a failed reading (the last answer is kept). */
  onError?: (error: unknown) => void;
  /** Milliseconds since some origin; tests pass a fake. */
  now?: () => number;
  read?: FreeSpaceReader;
}

/**
 * StorageCapacity of a SQLite database: free space on its file system against
 * MIN_FREE_DISK_BYTES. A reading older than DISK_CHECK_INTERVAL_MS is refreshed in the
 * background while the previous answer is given (stale-while-revalidate); only the very first
 * call waits for one. A failed reading keeps the last answer (room, before any reading): a
 * monitoring hiccup must not refuse mail, and a real full disk still fails the write itself.
 */
export class DiskSpaceMonitor implements StorageCapacity {
  private room = true;
  private readAt: number | undefined;
  private refreshing: Promise<boolean> | undefined;
  private readonly now: () => number;
  private readonly read: FreeSpaceReader;

  constructor(private readonly options: DiskSpaceMonitorOptions) {
    this.now = options.now ?? (() => performance.now());
    this.read = options.read ?? readFreeSpace;
  }

  hasRoom(): Promise<boolean> {
    if (this.readAt === undefined) return this.refresh();
    if (this.now() - this.readAt >= DISK_CHECK_INTERVAL_MS) void this.refresh();
    return Promise.resolve(this.room);
  }

  /** One reading at a time; concurrent callers share it. */
  private refresh(): Promise<boolean> {
    this.refreshing ??= this.read(this.options.path)
      .then(
        (free) => {
          this.room = free >= this.options.minFreeBytes;
          return this.room;
        },
        (error: unknown) => {
          this.options.onError?.(error);
          return this.room;
        },
      )
      .finally(() => {
        this.readAt = this.now();
        this.refreshing = undefined;
      });
    return this.refreshing;
  }
}
