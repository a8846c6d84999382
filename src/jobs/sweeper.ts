import type { Logger } from 'pino';
import type { SweepCounts } from '../domain/types.js';
import type { SweepService } from '../services/sweep-service.js';

/** Options of the periodic sweeper. */
export interface SweeperOptions {
  sweep: SweepService;
  intervalSeconds: number;
  logger: Logger;
  /** Called after every run with what it deleted (metrics). */
  onRun?: (counts: SweepCounts, durationSeconds: number) => void;
}

/**
 * Runs the sweep every interval until stopped: start(), runOnce(), awaited stop() (inbucket
 * retention.go's Start/DoScan/Join). A failing run is logged and retried next interval.
 */
export class Sweeper {
  private readonly abort = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<SweepCounts> | undefined;

  constructor(private readonly options: SweeperOptions) {}

  /** Schedules runs every interval; the first one after one interval. */
  start(): void {
    this.schedule();
  }

  /** Runs one sweep now (or joins the one in progress). */
  runOnce(): Promise<SweepCounts> {
    this.running ??= this.execute().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Cancels future runs and waits for the current one to finish its batch. */
  async stop(): Promise<void> {
    this.abort.abort();
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }

  private schedule(): void {
    if (this.abort.signal.aborted) return;
    this.timer = setTimeout(() => {
      this.runOnce()
        .catch(() => undefined)
        .finally(() => this.schedule());
    }, this.options.intervalSeconds * 1000);
    // The sweeper alone never keeps the process alive.
    this.timer.unref();
  }

  private async execute(): Promise<SweepCounts> {
    const started = process.hrtime.bigint();
    try {
      const counts = await this.options.sweep.runOnce(this.abort.signal);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      this.options.onRun?.(counts, seconds);
      if (counts.inboxes + counts.messages + counts.sessions > 0) {
        this.options.logger.info({ ...counts, seconds }, 'swept expired data');
      }
      return counts;
    } catch (error) {
      this.options.logger.warn({ err: error }, 'sweep failed; retrying next interval');
      throw error;
    }
  }
}
