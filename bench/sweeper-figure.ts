import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchOptions } from './bench-options.js';
import { pollableInbox } from './http-figures.js';
import { runPacedLoad } from './paced-polls.js';
import type { ResultRow } from './result-table.js';
import { prepareScaleDatabase } from './scale-data.js';
import { startService } from './service-process.js';
import { percentile } from './stats.js';

/** Messages per expired inbox: 1,000,000 messages are 100,000 inboxes, one sweeper run's cap. */
const MESSAGES_PER_EXPIRED_INBOX = 10;
/** The sweeper's first run comes this long after start: polls run a few seconds before it, for comparison. */
const SWEEP_INTERVAL_SECONDS = 8;
/** Polls per second while the sweeper runs (the moderate load of figure 2). */
const POLLS_PER_SECOND = 200;
/** Target of figure 6. */
const TARGET_MAX_MS = 100;
/** A sweep that takes longer is reported as failed. */
const SWEEP_TIMEOUT_SECONDS = 900;

/** A sweeper log line (`"msg":"swept expired data"`); `time` is pino's epoch ms. */
interface SweepLine {
  messages: number;
  seconds: number;
  time: number;
}

const fmt = (ms: number): string => (Number.isFinite(ms) ? ms.toFixed(1) : '—');

/**
 * Figure 6: a database holding `options.sweepMessages` expired messages; the service's own
 * sweeper deletes them while /api/check is polled at a steady rate. Reports the time the
 * sweeper's runs took (from its log lines) and the slowest poll meanwhile.
 */
export async function sweeperFigure(options: BenchOptions): Promise<ResultRow[]> {
  const dir = mkdtempSync(join(tmpdir(), 'tempinbox-bench-sweep-'));
  const path = join(dir, 'tempinbox.db');
  const expiredInboxes = Math.ceil(options.sweepMessages / MESSAGES_PER_EXPIRED_INBOX);
  try {
    prepareScaleDatabase(path, { inboxes: 0, messages: 0, expiredInboxes, expiredMessagesEach: MESSAGES_PER_EXPIRED_INBOX }, true);
    const service = await startService(
      `sqlite:${path}`,
      { ...options.serviceEnv, SWEEP_INTERVAL_SECONDS: String(SWEEP_INTERVAL_SECONDS) },
      (line) => line.includes('"msg":"swept expired data"'),
    );
    try {
      const polled = await pollableInbox(service);
      const swept = (): SweepLine[] => service.server.kept.map((line) => JSON.parse(line) as SweepLine);
      const deleted = (): number => swept().reduce((sum, line) => sum + line.messages, 0);
      const expected = expiredInboxes * MESSAGES_PER_EXPIRED_INBOX;
      const started = Date.now();
      const polls = await runPacedLoad({
        url: `${service.baseUrl}/api/check/${polled.inbox.username}`,
        headers: { cookie: polled.inbox.cookie },
        clients: 10,
        rate: POLLS_PER_SECOND,
        done: () => deleted() >= expected || Date.now() - started > SWEEP_TIMEOUT_SECONDS * 1000,
      });
      const total = deleted();
      const sweepSeconds = swept().reduce((sum, line) => sum + line.seconds, 0);
      // The sweep's runs, from their log lines (logged at the end of each run, with its duration).
      const windows = swept().map((line) => ({ from: line.time - line.seconds * 1000, to: line.time }));
      const during = polls.samples.filter((sample) => windows.some((w) => sample.at + sample.ms >= w.from && sample.at <= w.to)).map((s) => s.ms);
      const before = polls.samples.filter((sample) => windows.every((w) => sample.at + sample.ms < w.from)).map((s) => s.ms);
      const worst = Math.max(...during);
      console.error(`bench: 6 sweeper: ${total} messages in ${sweepSeconds.toFixed(1)} s; slowest poll ${worst.toFixed(0)} ms`);
      return [
        {
          figure: '6 sweeper',
          label: `delete ${total.toLocaleString('en-US')} expired messages (${expiredInboxes.toLocaleString('en-US')} inboxes)`,
          value: sweepSeconds,
          unit: 's',
          detail: `${(total / sweepSeconds).toFixed(0)} messages/s; ${swept().length} sweeper run(s)`,
        },
        {
          figure: '6 sweeper',
          label: `slowest /api/check while it runs (${POLLS_PER_SECOND} polls/s)`,
          value: worst,
          unit: 'ms',
          detail: `p50/p99 ${fmt(percentile(during, 0.5))}/${fmt(percentile(during, 0.99))} ms over ${during.length} polls, ${during.filter((ms) => ms >= TARGET_MAX_MS).length} of them ≥ ${TARGET_MAX_MS} ms; before the sweep p99 ${fmt(percentile(before, 0.99))}, max ${fmt(Math.max(...before))} ms${polls.failures > 0 ? `; **${polls.failures} failed**` : ''}`,
          target: `max < ${TARGET_MAX_MS} ms`,
          met: worst < TARGET_MAX_MS && polls.failures === 0,
        },
      ];
    } finally {
      await service.server.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
