import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { SweepCounts } from '../domain/types.js';
import { registerProcessMetrics, type ProcessMetrics } from './process-metrics.js';

/** Prometheus metrics of one app instance (its own Registry: no global state, tests stay isolated). */
export class Metrics {
  readonly registry = new Registry();

  private readonly httpRequests = new Counter({
    name: 'tempinbox_http_requests_total',
    help: 'HTTP responses by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  private readonly httpDuration = new Histogram({
    name: 'tempinbox_http_request_duration_seconds',
    help: 'HTTP request duration',
    labelNames: ['route'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
    registers: [this.registry],
  });
  private readonly smtpAccepted = new Counter({
    name: 'tempinbox_smtp_messages_accepted_total',
    help: 'Messages answered 250 after DATA (committed)',
    registers: [this.registry],
  });
  private readonly smtpDeliveries = new Counter({
    name: 'tempinbox_smtp_deliveries_total',
    help: 'Inbox copies stored (a message to two inboxes counts two)',
    registers: [this.registry],
  });
  private readonly smtpBytes = new Counter({
    name: 'tempinbox_smtp_received_bytes_total',
    help: 'Bytes of accepted messages',
    registers: [this.registry],
  });
  private readonly smtpRejected = new Counter({
    name: 'tempinbox_smtp_rejections_total',
    help: 'SMTP commands refused, by reply code',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });
  private readonly sweptTotal = new Counter({
    name: 'tempinbox_sweeper_deleted_total',
    help: 'Rows deleted by the expiry sweeper, by kind',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  private readonly sweepRuns = new Counter({
    name: 'tempinbox_sweeper_runs_total',
    help: 'Completed sweeper runs',
    registers: [this.registry],
  });
  private readonly sweepSeconds = new Gauge({
    name: 'tempinbox_sweeper_last_run_seconds',
    help: 'Duration of the last sweeper run',
    registers: [this.registry],
  });

  private readonly webhookDeliveries = new Counter({
    name: 'tempinbox_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome: delivered, retried (failed, another attempt owed), failed (given up)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  private readonly process: ProcessMetrics = registerProcessMetrics(this.registry, 'tempinbox_');

  /** Stops what samples between scrapes (event-loop delay, GC observer); rendering still works. */
  stop(): void {
    this.process.stop();
  }

  /** Records one HTTP response. */
  httpResponse(method: string, route: string, status: number, seconds: number): void {
    this.httpRequests.inc({ method, route, status: String(status) });
    this.httpDuration.observe({ route }, seconds);
  }

  /** Records one message answered 250. */
  smtpMessageAccepted(recipients: number, bytes: number): void {
    this.smtpAccepted.inc();
    this.smtpDeliveries.inc(recipients);
    this.smtpBytes.inc(bytes);
  }

  /** Records an SMTP refusal by reply code. */
  smtpRejection(code: number): void {
    this.smtpRejected.inc({ code: String(code) });
  }

  /** Records one sweeper run. */
  sweepRun(counts: SweepCounts, seconds: number): void {
    this.sweepRuns.inc();
    this.sweepSeconds.set(seconds);
    this.sweptTotal.inc({ kind: 'inboxes' }, counts.inboxes);
    this.sweptTotal.inc({ kind: 'messages' }, counts.messages);
    this.sweptTotal.inc({ kind: 'sessions' }, counts.sessions);
  }

  /** Records what one webhook attempt came to. */
  webhookAttempt(outcome: 'delivered' | 'retried' | 'failed'): void {
    this.webhookDeliveries.inc({ outcome });
  }

  /** The exposition text and its content type. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
