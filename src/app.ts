import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { publicUrlOf } from './config/load-config.js';
import type { Config } from './config/schema.js';
import { systemClock, type Clock } from './domain/clock.js';
import { AppError } from './domain/errors.js';
import { SMTP_CONNECTIONS_PER_ADDRESS } from './domain/fair-use.js';
import type { PlanSettings } from './domain/plan.js';
import { createHttpServer } from './http/http-server.js';
import { Sweeper } from './jobs/sweeper.js';
import { createWorkerMailParser, type WorkerMailParserOptions } from './mail/worker-mail-parser.js';
import { createLogger } from './observability/logger.js';
import { Metrics } from './observability/metrics.js';
import type { MailStore } from './ports/mail-store.js';
import type { RateLimiter } from './ports/rate-limiter.js';
import { MemoryRateLimiter } from './rate-limit/memory-rate-limiter.js';
import { PostgresRateLimiter } from './rate-limit/postgres-rate-limiter.js';
import { DeliveryService } from './services/delivery-service.js';
import { FairUseService } from './services/fair-use-service.js';
import { InboxService } from './services/inbox-service.js';
import { LicenseService } from './services/license-service.js';
import { MessageService } from './services/message-service.js';
import { RefusedRecipientBudget } from './services/refused-recipient-budget.js';
import { SessionService } from './services/session-service.js';
import { SweepService } from './services/sweep-service.js';
import { createSmtpListener } from './smtp/smtp-listener.js';
import { openStore } from './storage/open-store.js';
import { RATE_LIMIT_TABLE } from './storage/sql/migrations.js';

/** The ports a running app listens on. */
export interface ListeningPorts {
  httpPort: number;
  smtpPort: number;
}

/** The assembled service: start, stop, and its parts for tests. */
export interface App {
  start(): Promise<ListeningPorts>;
  /** Stops accepting, drains in-flight work (bounded), then ends the parse workers and metrics collectors and closes the database. */
  stop(): Promise<void>;
  readonly store: MailStore;
  readonly http: FastifyInstance;
  readonly licenses: LicenseService;
  readonly delivery: DeliveryService;
  readonly sweeper: Sweeper;
  readonly logger: Logger;
}

/** Overrides tests use; production passes none. */
export interface AppOverrides {
  clock?: Clock;
  logger?: Logger;
  store?: MailStore;
  rateLimiter?: RateLimiter;
  /** Tests only: parse pool settings (a worker module that can crash on purpose, a small queue). */
  parsePool?: Pick<WorkerMailParserOptions, 'workerUrl' | 'threads' | 'maxQueued' | 'deadlineMs'>;
}

/** Plan numbers from the configuration. */
export function planSettings(config: Config): PlanSettings {
  return {
    freeTtlSeconds: config.freeTtlSeconds,
    premiumTtlSeconds: config.premiumTtlSeconds,
    premiumMaxInboxes: config.premiumMaxInboxes,
    freeMaxMessages: config.freeMaxMessages,
    premiumMaxMessages: config.premiumMaxMessages,
    freeMaxBytes: config.freeMaxBytes,
    premiumMaxBytes: config.premiumMaxBytes,
  };
}

/**
 * The store and the fair-use counters. On PostgreSQL both live in the one database, so every
 * node shares them (contract §5); SQLite serves one node, whose counters stay in memory.
 */
function openBackend(config: Config, logger: Logger, overrides: AppOverrides): { store: MailStore; rateLimiter: RateLimiter } {
  if (overrides.store !== undefined) return { store: overrides.store, rateLimiter: overrides.rateLimiter ?? new MemoryRateLimiter() };
  const opened = openStore(config.databaseUrl, {
    poolSize: config.databasePoolSize,
    onConnectionError: (error) => logger.warn({ err: error }, 'database connection lost; requests fail with 503 until it is back'),
  });
  const rateLimiter =
    overrides.rateLimiter ?? (opened.kind === 'postgres' ? new PostgresRateLimiter(opened.pool, RATE_LIMIT_TABLE) : new MemoryRateLimiter());
  return { store: opened.store, rateLimiter };
}

/**
 * The composition root: the one place that constructs adapters and wires them into the
 * services (inbucket's lifecycle.go). Nothing listens until start().
 */
export async function createApp(config: Config, overrides: AppOverrides = {}): Promise<App> {
  const clock = overrides.clock ?? systemClock;
  const logger = overrides.logger ?? createLogger(config.logLevel);
  const { store, rateLimiter } = openBackend(config, logger, overrides);
  const metrics = new Metrics();
  const plan = planSettings(config);
  const fairUse = new FairUseService(rateLimiter, config.rateLimits);

  const sessions = new SessionService(store, clock);
  const inboxes = new InboxService({ store, clock, fairUse, domains: config.domains, plan });
  const messages = new MessageService(store, clock);
  const licenses = new LicenseService({ store, clock, fairUse, plan });
  const parse = createWorkerMailParser({
    ...overrides.parsePool,
    onParseError: (error) => logger.warn({ err: error }, 'MIME parse failed; stored what could be read and the raw message'),
  });
  const delivery = new DeliveryService({ store, clock, parse, domains: config.domains, plan });
  const sweeper = new Sweeper({
    sweep: new SweepService(store, clock),
    intervalSeconds: config.sweepIntervalSeconds,
    logger,
    onRun: (counts, seconds) => metrics.sweepRun(counts, seconds),
  });

  const http = await createHttpServer({
    logger,
    trustProxy: config.trustProxy,
    onResponse: (method, route, status, seconds) => metrics.httpResponse(method, route, status, seconds),
    deps: {
      sessions,
      inboxes,
      messages,
      licenses,
      fairUse,
      domains: config.domains,
      secureCookies: publicUrlOf(config).startsWith('https://'),
      checkReady: async () => {
        try {
          await store.ping();
        } catch (error) {
          throw new AppError('unavailable', undefined, { cause: error });
        }
      },
      renderMetrics: () => metrics.render(),
    },
  });

  const smtp = createSmtpListener({
    delivery,
    logger,
    maxMessageBytes: config.maxMessageBytes,
    hostname: config.domains[0],
    tls:
      config.tlsCertFile !== undefined && config.tlsKeyFile !== undefined
        ? { cert: readFileSync(config.tlsCertFile), key: readFileSync(config.tlsKeyFile) }
        : undefined,
    maxConnectionsPerAddress: config.rateLimits ? SMTP_CONNECTIONS_PER_ADDRESS : undefined,
    // Through FairUseService: shared in the database on PostgreSQL, off with RATE_LIMITS=off.
    refusedRecipients: new RefusedRecipientBudget(fairUse),
    clock,
    metrics: {
      onAccepted: (recipients, bytes) => metrics.smtpMessageAccepted(recipients, bytes),
      onRejected: (code) => metrics.smtpRejection(code),
    },
  });

  let started = false;
  return {
    store,
    http,
    licenses,
    delivery,
    sweeper,
    logger,
    async start() {
      await store.migrate();
      await http.listen({ port: config.port, host: config.host });
      const address = http.server.address();
      const httpPort = typeof address === 'object' && address !== null ? address.port : config.port;
      const smtpPort = await smtp.listen(config.smtpPort, config.host);
      sweeper.start();
      started = true;
      logger.info({ http_port: httpPort, smtp_port: smtpPort, domains: config.domains }, 'listening');
      return { httpPort, smtpPort };
    },
    async stop() {
      if (started) {
        // Stop accepting on both listeners at once; each drains its in-flight work.
        await Promise.allSettled([http.close(), smtp.close()]);
        await sweeper.stop();
      }
      // After the drain: no transaction is waiting for a parse any more.
      await parse.close();
      metrics.stop();
      await store.close();
    },
  };
}
