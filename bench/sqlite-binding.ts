/**
 * better-sqlite3 against node:sqlite on tempinbox's write pattern (docs/decisions/0002-better-sqlite3.md):
 * WAL, synchronous=FULL, messages of 4 KB inserted in group transactions of GROUP rows (what
 * group commit does under load), plus the `since` poll's indexed read. Run with
 * `npx tsx bench/sqlite-binding.ts`; prints one line per binding and figure.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const require = createRequire(import.meta.url);

/** Messages written per run: enough for a few seconds of fsync-bound work on this machine. */
const MESSAGES = 6_000;
/** Rows per transaction: the group size group commit reaches at 10 connections. */
const GROUP = 10;
/** Polls timed per run. */
const POLLS = 20_000;
const BODY = 'x'.repeat(4096);

interface Statement {
  run(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}
interface Connection {
  exec(sql: string): void;
  prepare(sql: string): Statement;
  close(): void;
}

function measure(name: string, open: (path: string) => Connection): void {
  const dir = mkdtempSync(join(tmpdir(), 'sqlite-binding-'));
  const db = open(join(dir, 'db.sqlite'));
  db.exec('pragma journal_mode = WAL; pragma synchronous = FULL;');
  db.exec('create table messages (id text primary key, inbox_id text not null, received_at integer not null, body blob not null)');
  db.exec('create index messages_inbox on messages (inbox_id, received_at)');
  const insert = db.prepare('insert into messages (id, inbox_id, received_at, body) values (?, ?, ?, ?)');
  const body = Buffer.from(BODY);
  let started = process.hrtime.bigint();
  for (let i = 0; i < MESSAGES; i += GROUP) {
    db.exec('begin');
    for (let j = 0; j < GROUP; j++) insert.run(`m${i + j}`, `inbox${(i + j) % 50}`, i + j, body);
    db.exec('commit');
  }
  const writeSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  const poll = db.prepare('select id, received_at from messages where inbox_id = ? and received_at > ? order by received_at desc limit 100');
  started = process.hrtime.bigint();
  for (let i = 0; i < POLLS; i++) poll.all(`inbox${i % 50}`, MESSAGES - 200);
  const pollSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  db.close();
  rmSync(dir, { recursive: true, force: true });
  console.log(`${name}: ${Math.round(MESSAGES / writeSeconds)} msg/s written (groups of ${GROUP}, fsync per commit), ${Math.round(POLLS / pollSeconds)} polls/s`);
}

const BetterSqlite3 = require('better-sqlite3') as new (path: string) => Connection;
const { DatabaseSync } = require('node:sqlite') as { DatabaseSync: new (path: string) => Connection };
for (let round = 0; round < 2; round++) {
  measure('better-sqlite3', (path) => new BetterSqlite3(path));
  measure('node:sqlite   ', (path) => new DatabaseSync(path));
}
