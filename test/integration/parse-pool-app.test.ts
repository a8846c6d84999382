import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildTestApp } from '../helpers/build-test-app.js';
import { sendWithNodemailer } from '../helpers/send-mail.js';
import { poisonTestMessage } from '../helpers/poison-message.js';

const POISON_WORKER = new URL('../fixtures/workers/poison-parse-worker.ts', import.meta.url);
const dir = mkdtempSync(join(tmpdir(), 'tempinbox-parse-pool-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function rawMessage(to: string, subject: string, poison?: string): string {
  return poisonTestMessage(subject, { to, poison });
}

/** OS threads of this process (Linux): each worker thread is one. */
function osThreads(): number {
  return readdirSync('/proc/self/task').length;
}

/** Active resources by type (what keeps the event loop alive). */
function resourceCounts(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const type of process.getActiveResourcesInfo()) counts.set(type, (counts.get(type) ?? 0) + 1);
  return counts;
}

/**
 * Waits up to 5 s: shorter than PARSE_WORKER_IDLE_MS, so that a worker leaving by its idle
 * timeout cannot pass for one that stop() ended.
 */
async function eventually(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Waits for a condition that must come true (fails the test after 30 s). */
async function until(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in 30 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('parse workers in the app', () => {
  it('stores a message that kills its parse worker, with its raw bytes and the header-only parse, takes the next one normally, and stop() leaves no thread or handle behind', async () => {
    const resourcesBefore = resourceCounts();
    const { app, smtpPort, newInbox, stop } = await buildTestApp({ store: 'sqlite', overrides: { parsePool: { workerUrl: POISON_WORKER } } });
    const { cookie, email } = await newInbox();

    const poison = rawMessage(email, 'poison', 'exit');
    expect(await sendWithNodemailer(smtpPort, { envelope: { from: 'sender@example.org', to: [email] }, raw: poison })).toMatch(/^250/);
    expect(await sendWithNodemailer(smtpPort, { envelope: { from: 'sender@example.org', to: [email] }, raw: rawMessage(email, 'healthy') })).toMatch(
      /^250/,
    );

    const check = await app.http.inject({ method: 'GET', url: `/api/check/${email}`, headers: { cookie } });
    const emails = check.json().emails as Array<{ id: string; subject: string; attachments: unknown[] }>;
    expect(emails.map((message) => message.subject)).toEqual(['healthy', 'poison']);
    const [healthy, poisoned] = emails;
    expect(healthy?.attachments).toHaveLength(1);
    // The header-only fallback: headers read, no MIME structure.
    expect(poisoned?.attachments).toEqual([]);
    const raw = await app.http.inject({ method: 'GET', url: `/api/messages/${poisoned?.id ?? ''}/raw`, headers: { cookie } });
    expect(raw.statusCode).toBe(200);
    // The server may put trace headers in front; the bytes received follow unchanged.
    expect(raw.body.endsWith(poison)).toBe(true);

    const threadsRunning = osThreads();
    await stop();
    // Relative: other threads of the process (libuv's pool) may have started meanwhile.
    await eventually(() => osThreads() < threadsRunning);
    expect(osThreads()).toBeLessThan(threadsRunning);
    const leftover = (): string[] =>
      [...resourceCounts()].filter(([type, count]) => count > (resourcesBefore.get(type) ?? 0)).map(([type, count]) => `${type}×${count}`);
    await eventually(() => leftover().length === 0);
    expect(leftover()).toEqual([]);
  }, 90_000);

  it('answers 451 while the parse queue is full, so the sender retries, and takes the message once there is room', async () => {
    const { app, smtpPort, newInbox } = await buildTestApp({
      store: 'sqlite',
      overrides: { parsePool: { workerUrl: POISON_WORKER, threads: 1, maxQueued: 0, deadlineMs: 60_000 } },
    });
    const { cookie, email } = await newInbox();
    const envelope = { from: 'sender@example.org', to: [email] };

    // The first message holds the one worker (and so the whole queue) until released.
    const hold = mkdtempSync(join(dir, 'hold-'));
    writeFileSync(join(hold, 'hold'), '');
    const busy = sendWithNodemailer(smtpPort, { envelope, raw: rawMessage(email, 'busy', `hold:${hold}`) });
    await until(() => existsSync(join(hold, 'started')));
    const refused = await sendWithNodemailer(smtpPort, { envelope, raw: rawMessage(email, 'refused') }).catch((error: unknown) => error);
    expect((refused as { response?: string }).response).toMatch(/^451 4\.3\.0/);
    rmSync(join(hold, 'hold'));
    expect(await busy).toMatch(/^250/);
    expect(await sendWithNodemailer(smtpPort, { envelope, raw: rawMessage(email, 'retried') })).toMatch(/^250/);

    const check = await app.http.inject({ method: 'GET', url: `/api/check/${email}`, headers: { cookie } });
    expect((check.json().emails as Array<{ subject: string }>).map((message) => message.subject)).toEqual(['retried', 'busy']);
  }, 90_000);
});
