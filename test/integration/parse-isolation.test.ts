import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { loadConfig } from '../../src/config/load-config.js';
import { createLogger } from '../../src/observability/logger.js';
import { poisonTestMessage } from '../helpers/poison-message.js';
import { innocentMessage, sendBeside } from '../helpers/send-beside.js';

/**
 * The real parse worker, except that a message with `X-Test-Poison: slow-<ms>` spins that
 * long first: a parse slow for a reason we do not know yet, which only the deadline stops.
 */
const POISON_WORKER = new URL('../fixtures/workers/poison-parse-worker.ts', import.meta.url);

/**
 * The deadline for this test: long enough for a worker to start under tsx on a loaded
 * machine (a second or two), short enough to keep the test quick.
 */
const DEADLINE_MS = 6_000;

interface Listed {
  subject: string;
  codes: string[];
  attachments: { filename: string }[];
}

/**
 * One message's slow parse never degrades or delays another's: a message whose parse runs
 * into the deadline, and an innocent message (a code, an attachment) sent 5–50 ms behind it
 * over real SMTP, into the app with one parse thread (the default on a two-core machine) and
 * a real SQLite file. The innocent one is parsed whole, and answered long before the hostile
 * one is given up.
 */
describe('a slow parse beside an innocent message', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tempinbox-parse-isolation-'));
  let app: App;
  let smtpPort: number;
  let cookie: string;
  let email: string;

  beforeAll(async () => {
    app = await createApp(
      loadConfig({ PORT: '0', SMTP_PORT: '0', HOST: '127.0.0.1', RATE_LIMITS: 'off', DATABASE_URL: `sqlite:${join(dir, 'db.sqlite')}` }),
      { logger: createLogger('silent'), parsePool: { workerUrl: POISON_WORKER, threads: 1, deadlineMs: DEADLINE_MS } },
    );
    ({ smtpPort } = await app.start());
    const created = await app.http.inject({ method: 'GET', url: '/api/create' });
    cookie = String(created.headers['set-cookie']).split(';')[0] ?? '';
    email = created.json().email as string;
  });
  afterAll(async () => {
    await app.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([5, 25, 50])('%i ms apart: the innocent message is stored whole, and answered first', async (gapMs) => {
    const { hostile, innocent } = await sendBeside(
      smtpPort,
      { from: 'sender@example.org', to: email },
      { hostile: poisonTestMessage(`stuck ${gapMs}`, { to: email, poison: 'slow-60000' }), innocent: innocentMessage(email, `innocent ${gapMs}`), gapMs },
    );
    expect(innocent.reply).toMatch(/^250 /);
    expect(hostile.reply).toMatch(/^250 /);

    const check = await app.http.inject({ method: 'GET', url: `/api/check/${email}`, headers: { cookie } });
    const emails = check.json().emails as Listed[];
    const sent = emails.find((message) => message.subject === `innocent ${gapMs}`);
    expect(sent?.attachments.map((attachment) => attachment.filename)).toEqual(['invoice.pdf']);
    expect(sent?.codes).toEqual(['482913']);
    // The stuck one was given up at its deadline: the header-only parse, no attachment.
    expect(emails.find((message) => message.subject === `stuck ${gapMs}`)?.attachments).toEqual([]);
    expect(hostile.answeredAfterMs).toBeGreaterThanOrEqual(DEADLINE_MS - 100);
    // Not queued behind the stuck parse: answered while it was still running.
    expect(innocent.answeredAfterMs).toBeLessThan(hostile.answeredAfterMs - 1_000);
  }, 60_000);
});
