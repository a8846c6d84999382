import { randomBytes } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { DOMAIN, RECIPIENT_LOCAL } from './bench-db.js';
import type { BenchOptions } from './bench-options.js';
import { BENCH_SENDER } from './bench-sender.js';
import { startFreshService } from './fresh-service.js';
import type { ResultRow } from './result-table.js';
import { sendOne } from './smtp-client.js';

/** Figure 10's name in the table. */
export const STORAGE_FIGURE = '10 storage';
/** Each message carries one attachment of this many random bytes (incompressible, as photos and archives are). */
const ATTACHMENT_BYTES = 3 * 1024 * 1024;
/** Messages sent: enough that the database's fixed pages are noise (quick: a smoke run). */
const MESSAGES = 20;
const QUICK_MESSAGES = 5;
/** Published target: bytes on disk per byte received. */
const TARGET = 1.2;
/** A checkpoint that finds a reader in the way is tried again, this many times at most. */
const CHECKPOINT_TRIES = 50;
const CHECKPOINT_RETRY_MS = 100;
/** Base64 lines are 76 characters (RFC 2045 §6.8). */
const BASE64_LINE = 76;

/** A message as mail clients send a file: a short text part and the file in base64, CRLF-ended. */
function attachmentMessage(to: string, n: number): string {
  const boundary = `bench-${n}-${randomBytes(8).toString('hex')}`;
  const base64 = randomBytes(ATTACHMENT_BYTES).toString('base64');
  const lines: string[] = [];
  for (let i = 0; i < base64.length; i += BASE64_LINE) lines.push(base64.slice(i, i + BASE64_LINE));
  return [
    `From: ${BENCH_SENDER}`,
    `To: ${to}`,
    `Subject: Your files (${n})`,
    `Message-ID: <${Date.now()}.${n}@bench.example>`,
    'MIME-Version: 1.0',
    `Content-Type: multipart/mixed; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    'The files you asked for are attached.',
    `--${boundary}`,
    `Content-Type: application/octet-stream; name="files-${n}.bin"`,
    `Content-Disposition: attachment; filename="files-${n}.bin"`,
    'Content-Transfer-Encoding: base64',
    '',
    ...lines,
    `--${boundary}--`,
    '',
  ].join('\r\n');
}

/**
 * The database's size on disk: the SQLite file plus its WAL after `wal_checkpoint(TRUNCATE)`
 * through a connection of our own (the service keeps running; its idle connections hold no
 * read transaction, so the checkpoint copies every committed page into the file and empties
 * the WAL). The `-shm` index holds no data and is not counted. Also the bytes of each table
 * and index (SQLite's dbstat table), to show where they went.
 */
async function onDisk(dbPath: string): Promise<{ bytes: number; busy: boolean; byTable: string }> {
  const db = new BetterSqlite3(dbPath, { timeout: 30_000 });
  try {
    let busy = true;
    for (let i = 0; i < CHECKPOINT_TRIES && busy; i += 1) {
      const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
      busy = result?.busy !== 0;
      if (busy) await new Promise((done) => setTimeout(done, CHECKPOINT_RETRY_MS));
    }
    let byTable = '';
    try {
      const rows = db.prepare('select name, sum(pgsize) as bytes from dbstat group by name order by bytes desc limit 3').all() as Array<{ name: string; bytes: number }>;
      byTable = rows.map((row) => `${row.name} ${(row.bytes / 2 ** 20).toFixed(1)} MiB`).join(', ');
    } catch {
      byTable = 'dbstat not available';
    }
    const wal = `${dbPath}-wal`;
    return { bytes: statSync(dbPath).size + (existsSync(wal) ? statSync(wal).size : 0), busy, byTable };
  } finally {
    db.close();
  }
}

/**
 * Figure 10: bytes on disk per byte received, for mail that is mostly attachments. A fresh
 * service (SQLite, every default) takes MESSAGES messages over SMTP, each with a random
 * ATTACHMENT_BYTES file in base64, one per inbox (no quota in the way); the database's growth
 * on disk (onDisk, before and after) divided by the bytes of the messages sent.
 */
export async function storageFigure(options: BenchOptions): Promise<ResultRow[]> {
  const count = options.quick ? QUICK_MESSAGES : MESSAGES;
  const service = await startFreshService(options.serviceEnv);
  try {
    const { db } = service.target;
    await db.ensureRecipients(count);
    const before = await onDisk(service.dbPath);
    const storedBefore = await db.countMessages();
    let received = 0;
    for (let n = 1; n <= count; n += 1) {
      const to = `${n}${RECIPIENT_LOCAL}@${DOMAIN}`;
      const message = attachmentMessage(to, n);
      received += Buffer.byteLength(message);
      await sendOne(service.service.smtpPort, BENCH_SENDER, to, message);
    }
    const stored = (await db.countMessages()) - storedBefore;
    const after = await onDisk(service.dbPath);
    const ratio = (after.bytes - before.bytes) / received;
    const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
    const checks = `${stored === count ? 'stored = sent' : `**stored ${stored} ≠ sent ${count}**`}${after.busy || before.busy ? '; **checkpoint busy**' : ''}`;
    console.error(`bench: ${STORAGE_FIGURE}: ${mib(after.bytes - before.bytes)} on disk for ${mib(received)} received (${ratio.toFixed(2)}×)`);
    return [
      {
        figure: STORAGE_FIGURE,
        label: `bytes on disk per byte received, ${count} messages each with a random ${ATTACHMENT_BYTES / 2 ** 20} MiB attachment (base64)`,
        value: ratio,
        unit: '×',
        detail: `SQLite file + WAL after a checkpoint grew ${mib(after.bytes - before.bytes)} for ${mib(received)} received; largest: ${after.byTable}; ${checks}`,
        target: `≤ ${TARGET}×`,
        met: Number.isFinite(ratio) && ratio <= TARGET && stored === count,
      },
    ];
  } finally {
    await service.stop();
  }
}
