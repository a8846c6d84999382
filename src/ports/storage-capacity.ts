/**
 * Whether the store has room for new mail (docs/api.md "Storage quotas"): asked at every
 * `RCPT TO` and by `/readyz`, so it answers from a cached reading and never waits for the disk.
 */
export interface StorageCapacity {
  /** False while the database's file system has less free space than configured. */
  hasRoom(): Promise<boolean>;
}

/** The capacity of a backend that watches nothing (PostgreSQL, in-memory SQLite, a watermark of 0): always room. */
export const UNLIMITED_CAPACITY: StorageCapacity = { hasRoom: () => Promise.resolve(true) };
