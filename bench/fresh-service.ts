import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteBenchDb, type BenchDb } from './bench-db.js';
import { startService, type ServiceProcess } from './service-process.js';

/** A service on a fresh SQLite file, with what it takes to drive and stop it. */
export interface BenchService {
  service: ServiceProcess;
  /** Figure 1's SMTP target: its port and pid, and the database to seed and verify. */
  target: { port: number; pid: number; db: BenchDb };
  dbPath: string;
  /** Stops the service and deletes its folder. */
  stop: () => Promise<void>;
}

/** Starts the service (bench/service-process.ts) on a fresh SQLite file in a folder of its own. */
export async function startFreshService(env: Record<string, string> = {}): Promise<BenchService> {
  const dir = mkdtempSync(join(tmpdir(), 'tempinbox-bench-service-'));
  const dbPath = join(dir, 'tempinbox.db');
  try {
    const service = await startService(`sqlite:${dbPath}`, env);
    const db = openSqliteBenchDb(dbPath);
    return {
      service,
      target: { port: service.smtpPort, pid: service.pid, db },
      dbPath,
      stop: async () => {
        await db.close();
        await service.server.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}
