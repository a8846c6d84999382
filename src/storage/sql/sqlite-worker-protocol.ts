/**
 * The messages between the SQLite thread (sqlite-worker.ts) and its driver
 * (sqlite-worker-driver.ts). Types only: the thread imports nothing else of ours at run time.
 */
import type { MessagePort } from 'node:worker_threads';
import type { WireDelivery, WireOutcomes } from './sqlite-delivery.js';

/** An error as plain data; `code` is SQLite's (e.g. SQLITE_FULL), which classifies it. */
export interface SerializedError {
  name: string;
  message: string;
  stack?: string | undefined;
  code?: string | undefined;
}

/** workerData.tempinboxSqlite: what the thread opens and how it reports that it did. */
export interface WorkerStart {
  path: string;
  /** Set to 1 (and notified) once WorkerInit is posted on initPort: the main thread waits on it. */
  signal: Int32Array;
  initPort: MessagePort;
}

/** The outcome of opening the database. */
export type WorkerInit = { ok: true } | { ok: false; error: SerializedError };

/** One request; answered by the WorkerReply with the same id. */
export type WorkerRequest =
  | { id: number; op: 'query'; sql: string; parameters: readonly unknown[] }
  | { id: number; op: 'deliver'; deliveries: WireDelivery[] }
  | { id: number; op: 'rollback' }
  | { id: number; op: 'close' };

/** The answer to one request: Kysely's QueryResult fields, or the error. */
export type WorkerReply =
  | { id: number; ok: true; rows: unknown[]; numAffectedRows?: bigint; insertId?: bigint; outcomes?: WireOutcomes[] }
  | { id: number; ok: false; error: SerializedError };
