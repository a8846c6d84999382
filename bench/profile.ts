/**
 * `npx tsx bench/profile.ts [smtp-4k|smtp-100k|smtp-one|check|since|create] [seconds]`: runs one
 * load against the service started with `node --cpu-prof`, then prints where its CPU went
 * (self time by function and by package, inclusive time of the hot paths). The .cpuprofile
 * is kept for a flame graph (open it in Chrome DevTools or speedscope).
 */
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkInbox, createInbox } from './api-client.js';
import { DOMAIN, openSqliteBenchDb, RECIPIENT_LOCAL } from './bench-db.js';
import { summariseProfile } from './cpu-profile-summary.js';
import { runHttpLoad } from './http-load.js';
import { ensureBuilt, startService } from './service-process.js';
import { buildMessage, sendOne } from './smtp-client.js';
import { findSmtpSource, runSmtpSource } from './smtp-source.js';

const load = process.argv[2] ?? 'smtp-4k';
const seconds = Number(process.argv[3] ?? 8);
ensureBuilt();
const dir = mkdtempSync(join(tmpdir(), 'tempinbox-profile-'));
const service = await startService(`sqlite:${join(dir, 'tempinbox.db')}`, {}, undefined, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
const db = openSqliteBenchDb(join(dir, 'tempinbox.db'));
try {
  if (load.startsWith('smtp')) {
    const size = load === 'smtp-100k' ? 102_400 : 4096;
    const one = load === 'smtp-one';
    const messages = Math.round(seconds * (size > 4096 ? 60 : 400));
    await db.ensureRecipients(messages);
    const result = await runSmtpSource(findSmtpSource(), {
      port: service.smtpPort,
      sessions: one ? 500 : 10,
      messages,
      size,
      keepConnection: !one,
      recipient: `${RECIPIENT_LOCAL}@${DOMAIN}`,
    });
    console.log(`${messages} messages in ${result.seconds.toFixed(1)} s (${(messages / result.seconds).toFixed(0)} msg/s)`);
  } else {
    const inbox = await createInbox(service.baseUrl);
    for (let i = 0; i < 20; i += 1) await sendOne(service.smtpPort, 'a@bench.example', inbox.email, buildMessage('a@bench.example', inbox.email, `m${i}`, 1024));
    const newest = (await checkInbox(service.baseUrl, inbox)).ids[0] ?? '';
    const url =
      load === 'create'
        ? `${service.baseUrl}/api/create`
        : `${service.baseUrl}/api/check/${inbox.username}${load === 'since' ? `?since=${newest}` : ''}`;
    const result = await runHttpLoad({ url, connections: 10, seconds, headers: load === 'create' ? {} : { cookie: inbox.cookie } });
    console.log(`${result.rps.toFixed(0)} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, failures ${result.failures}`);
  }
} finally {
  await db.close();
  await service.server.stop();
}
const file = readdirSync(dir).find((name) => name.endsWith('.cpuprofile'));
if (file === undefined) throw new Error('no profile written');
const summary = summariseProfile(join(dir, file), 25, ['parseMail', 'PostalMime', 'insertMessageCopies', 'sanitize', 'htmlToPlainText', 'smtp-server', 'kysely', 'pino', 'fastify', 'checkInboxHandler', 'findSession']);
const pct = (share: number) => `${(share * 100).toFixed(1).padStart(5)} %`;
console.log(`\nprofile: ${join(dir, file)}\n\nself time by place:`);
for (const row of summary.places) console.log(`${pct(row.share)}  ${row.name}`);
console.log('\nself time by function:');
for (const row of summary.functions) console.log(`${pct(row.share)}  ${row.name}`);
console.log('\ninclusive time:');
for (const row of summary.inclusive) console.log(`${pct(row.share)}  ${row.name}`);
