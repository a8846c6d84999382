import { createHash } from 'node:crypto';
import { closeSync, copyFileSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { DOMAIN } from './bench-db.js';
import { migrate, ROOT } from './service-process.js';
import { secondsSince } from './stats.js';

/** What to put in a generated database. */
export interface ScaleSpec {
  /** Active inboxes (each with its session), and messages spread evenly over them. */
  inboxes: number;
  messages: number;
  /** Inboxes already expired, with `expiredMessagesEach` messages each (for the sweeper). */
  expiredInboxes?: number;
  expiredMessagesEach?: number;
}

/** Where generated databases are kept between runs (never committed). */
const CACHE_DIR = join(tmpdir(), 'tempinbox-bench-cache');

/** A stored message of about 0.5 KB ({n} is its number): the figures depend on row counts and index depth, not on bytes. */
const RAW_TEMPLATE =
  `From: Sender <sender@example.org>\r\nTo: someone@${DOMAIN}\r\nSubject: Your code is {n}\r\n` +
  `Date: Sat, 21 Nov 2026 16:00:00 +0000\r\nMessage-ID: <{n}@example.org>\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n` +
  `Hello,\r\n\r\nyour verification code is {n}. It expires in 10 minutes.\r\n\r\n${'Lorem ipsum dolor sit amet. '.repeat(8)}\r\n`;

/**
 * The numbers 1…:count as rows. Ids are a letter and the zero-padded number (22 chars, the
 * service's id shape), so rows arrive in index order and each B-tree is appended to rather
 * than split at random: the indexes end up densely packed, as after a VACUUM.
 */
const SEQUENCE = 'with recursive seq(i) as (select 1 union all select i + 1 from seq where i < :count)';
const id = (letter: string, expression: string): string => `'${letter}' || printf('%021d', ${expression})`;

/** Inboxes :first+1 … :first+:count, each with a session and :per messages (numbered from :firstMessage+1). */
function loadInboxes(db: BetterSqlite3.Database, numbers: Record<string, number | string>): void {
  // The recursive sequence always yields its first row: nothing to load must not load one.
  if (numbers.count === 0) return;
  // better-sqlite3 binds JS numbers as REAL; the service stores integers (ids, epoch ms).
  const values = Object.fromEntries(Object.entries(numbers).map(([key, value]) => [key, typeof value === 'number' ? BigInt(value) : value]));
  db.prepare(
    `${SEQUENCE} insert into sessions (id, token_hash, created_at, expires_at, license_id)
     select ${id('s', 'i + :first')}, printf('%064x', i + :first), :created, :sessionExpires, null from seq`,
  ).run(values);
  db.prepare(
    `${SEQUENCE} insert into inboxes (id, username, domain, created_at, expires_at, session_id, license_id)
     select ${id('i', 'i + :first')}, :prefix || printf('%08d', i + :first), :domain, :created, :expires, ${id('s', 'i + :first')}, null from seq`,
  ).run(values);
  const messages = { ...values, count: BigInt(Number(numbers.count) * Number(numbers.per)) };
  if (messages.count === 0n) return;
  db.prepare(
    `${SEQUENCE} insert into contents (id, envelope_from, from_header, to_header, subject, text_body, html_body, headers_json,
       message_id_header, size, attachment_count, created_at, raw)
     select ${id('c', 'i + :firstMessage')}, 'sender@example.org', 'Sender <sender@example.org>', 'someone@' || :domain,
       'Your code is ' || (i + :firstMessage), 'Hello, your verification code is ' || (i + :firstMessage) || '.', null,
       '[{"name":"Subject","value":"Your code"}]', '<' || (i + :firstMessage) || '@example.org>', length(raw), 0, :created, cast(raw as blob)
     from (select i, replace(:template, '{n}', i + :firstMessage) as raw from seq)`,
  ).run({ ...messages, template: RAW_TEMPLATE });
  db.prepare(
    `${SEQUENCE} insert into messages (id, inbox_id, content_id, received_at)
     select ${id('m', 'i + :firstMessage')}, ${id('i', '(i - 1) / :per + 1 + :first')}, ${id('c', 'i + :firstMessage')}, :created + i from seq`,
  ).run(messages);
}

/**
 * Loads the rows straight into the tables the migrations made (the schema is the service's
 * own), in SQL, without a round trip per row: much faster than SMTP, and the service then
 * starts on it as on any database.
 */
function load(path: string, spec: ScaleSpec): void {
  const db = new BetterSqlite3(path);
  // Nothing to protect while generating: no journal, no fsync, a large cache for the indexes.
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.pragma('cache_size = -1000000');
  const now = Date.now();
  const common = { domain: DOMAIN, sessionExpires: now + 30 * 86_400_000 };
  const per = Math.max(1, Math.round(spec.messages / Math.max(1, spec.inboxes)));
  loadInboxes(db, { ...common, count: spec.inboxes, first: 0, firstMessage: 0, per, prefix: 'scale', created: now - 3_600_000, expires: now + 30 * 86_400_000 });
  const expired = spec.expiredInboxes ?? 0;
  if (expired > 0) {
    loadInboxes(db, {
      ...common,
      count: expired,
      first: spec.inboxes,
      firstMessage: spec.inboxes * per,
      per: spec.expiredMessagesEach ?? 1,
      prefix: 'expired',
      created: now - 7_200_000,
      expires: now - 3_600_000,
    });
  }
  // The usage counters the service keeps on each inbox row (migration 0005-inbox-usage): the
  // rows above went in behind its back, so they are counted here, as the migration counts.
  db.exec(`update inboxes set
             message_count = (select count(*) from messages m where m.inbox_id = inboxes.id),
             byte_count = (select coalesce(sum(c.size), 0) from messages m join contents c on c.id = m.content_id where m.inbox_id = inboxes.id)`);
  // Back to what the service expects on disk (it sets WAL itself too).
  db.pragma('journal_mode = WAL');
  db.close();
}

/**
 * Flushes a freshly written file to disk. Otherwise the kernel writes the gigabytes back
 * while the service runs, and the service's own fsyncs (synchronous=FULL) wait behind them:
 * single commits stalled for 100+ ms, which showed up as slow requests in figures 5 and 6.
 */
function flush(path: string): void {
  const fd = openSync(path, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Cache key: the sizes and the schema (migrations.ts), so a schema change regenerates. */
function cacheName(spec: ScaleSpec): string {
  const schema = createHash('sha256').update(readFileSync(join(ROOT, 'src', 'storage', 'sql', 'migrations.ts'))).digest('hex').slice(0, 12);
  return `scale-${spec.inboxes}-${spec.messages}-${spec.expiredInboxes ?? 0}x${spec.expiredMessagesEach ?? 0}-${schema}.db`;
}

/**
 * Puts a database with `spec`'s rows at `path`: generated once (migrations, then bulk
 * inserts) and kept in the cache folder; each run gets a fresh copy, so runs never see each
 * other's changes. Expired rows are relative to the generation time: generate them fresh.
 */
export function prepareScaleDatabase(path: string, spec: ScaleSpec, useCache: boolean): void {
  const started = process.hrtime.bigint();
  const cached = join(CACHE_DIR, cacheName(spec));
  if (useCache && existsSync(cached)) {
    copyFileSync(cached, path);
    flush(path);
    console.error(`bench: copied cached ${cached} in ${secondsSince(started).toFixed(0)} s`);
    return;
  }
  migrate(`sqlite:${path}`);
  load(path, spec);
  flush(path);
  console.error(`bench: generated ${spec.inboxes} inboxes, ${spec.messages} messages (+${spec.expiredInboxes ?? 0} expired inboxes) in ${secondsSince(started).toFixed(0)} s`);
  if (!useCache) return;
  mkdirSync(CACHE_DIR, { recursive: true });
  const partial = `${cached}.partial`;
  copyFileSync(path, partial);
  flush(partial);
  rmSync(cached, { force: true });
  renameSync(partial, cached);
}
