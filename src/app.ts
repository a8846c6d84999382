import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { publicUrlOf } from './config/load-config.js';
import type { Config } from './config/schema.js';
import { databaseStartupError, StartupError } from './config/startup-error.js';
import { systemClock, type Clock } from './domain/clock.js';
import { AppError } from './domain/errors.js';
import { SMTP_CONNECTIONS_PER_ADDRESS } from './domain/fair-use.js';
import type { PlanSettings } from './domain/plan.js';
import type { StallGuardOptions } from './http/stall-guard.js';
import { createHttpServer } from './http/http-server.js';
import { presentMessage } from './http/presenters.js';
import { Sweeper } from './jobs/sweeper.js';
import { WebhookWorker } from './jobs/webhook-worker.js';
import { createWorkerMailParser, type WorkerMailParserOptions } from './mail/worker-mail-parser.js';
import { MailauthSenderAuthenticator } from './mail-auth/mailauth-sender-authenticator.js';
import { createLogger } from './observability/logger.js';
import { InProcessInboxEvents } from './events/in-process-inbox-events.js';
import { Metrics } from './observability/metrics.js';
import type { InboxEvents } from './ports/inbox-events.js';
import type { MailStore } from './ports/mail-store.js';
import { UNLIMITED_CAPACITY, type StorageCapacity } from './ports/storage-capacity.js';
import type { RateLimiter } from './ports/rate-limiter.js';
import { webhookStoreOf, type WebhookStore } from './ports/webhook-store.js';
import type { WebhookTransport } from './ports/webhook-transport.js';
import { MemoryRateLimiter } from './rate-limit/memory-rate-limiter.js';
import { PostgresRateLimiter } from './rate-limit/postgres-rate-limiter.js';
import { DeliveryService } from './services/delivery-service.js';
import { FairUseService } from './services/fair-use-service.js';
import { HeldRequests } from './services/held-requests.js';
import { InboxService } from './services/inbox-service.js';
import { LiveMailService } from './services/live-mail-service.js';
import { LicenseService } from './services/license-service.js';
import { MessageService } from './services/message-service.js';
import { RefusedRecipientBudget } from './services/refused-recipient-budget.js';
import { SessionService } from './services/session-service.js';
import { SweepService } from './services/sweep-service.js';
import { WebhookDeliveryService } from './services/webhook-delivery-service.js';
import { WebhookService } from './services/webhook-service.js';
import { createSmtpListener } from './smtp/smtp-listener.js';
import { loadTlsFiles } from './smtp/tls-files.js';
import { openStore, type OpenedStore } from './storage/open-store.js';
import { RATE_LIMIT_TABLE } from './storage/sql/migrations.js';
import { PostgresInboxEvents } from './storage/sql/postgres-inbox-events.js';
import { createDestinationGuard } from './webhooks/destination-guard.js';
import { WebhookSender, webhookUserAgent } from './webhooks/webhook-sender.js';

/** How long stop() lets held waits and streams write their last answer before the HTTP drain. */
const HELD_DRAIN_MS = 2000;

/** The ports a running app listens on. */
export interface ListeningPorts {
  httpPort: number;
  smtpPort: number;
}

/** The assembled service: start, stop, and its parts for tests. */
export interface App {
  /** Applies pending migrations; a failure is a StartupError naming DATABASE_URL. */
  migrate(): Promise<void>;
  /** Migrates and opens both listeners; a failure is a StartupError naming what failed. */
  start(): Promise<ListeningPorts>;
  /** Stops accepting, drains in-flight work (bounded), then ends the parse workers and metrics collectors and closes the database. */
  stop(): Promise<void>;
  readonly store: MailStore;
  readonly http: FastifyInstance;
  readonly licenses: LicenseService;
  readonly delivery: DeliveryService;
  readonly sweeper: Sweeper;
  /** Delivers the webhooks this node claims. */
  readonly webhookWorker: WebhookWorker;
  /** The event path of waiters and streams. */
  readonly events: InboxEvents;
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
  capacity?: StorageCapacity;
  /** Tests only: the event path (default: in process, or LISTEN/NOTIFY on PostgreSQL). */
  events?: InboxEvents;
  /** Tests only: shorter times for the HTTP rule that drops a client taking no bytes. */
  httpStall?: StallGuardOptions;
  /** Tests only: the webhook store, when `store` carries none. */
  webhooks?: WebhookStore;
  /** Tests only: certificates webhook deliveries trust instead of the system's (a throwaway CA). */
  webhookCa?: string | Buffer;
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
 * node shares them (docs/scaling.md); SQLite serves one node, whose counters stay in memory.
 */
function openBackend(
  config: Config,
  logger: Logger,
  overrides: AppOverrides,
): { store: MailStore; rateLimiter: RateLimiter; capacity: StorageCapacity; events: InboxEvents } {
  if (overrides.store !== undefined) {
    return {
      store: overrides.store,
      rateLimiter: overrides.rateLimiter ?? new MemoryRateLimiter(),
      capacity: overrides.capacity ?? UNLIMITED_CAPACITY,
      events: overrides.events ?? new InProcessInboxEvents(),
    };
  }
  let opened: OpenedStore;
  try {
    opened = openStore(config.databaseUrl, {
      poolSize: config.databasePoolSize,
      onConnectionError: (error) => logger.warn({ err: error }, 'database connection lost; requests fail with 503 until it is back'),
      minFreeDiskBytes: config.minFreeDiskBytes,
      onCapacityError: (error) => logger.warn({ err: error }, 'cannot read the free space of the database disk'),
    });
  } catch (error) {
    throw databaseStartupError(config.databaseUrl, error);
  }
  const rateLimiter =
    overrides.rateLimiter ?? (opened.kind === 'postgres' ? new PostgresRateLimiter(opened.pool, RATE_LIMIT_TABLE) : new MemoryRateLimiter());
  // Several nodes share one PostgreSQL: events travel by LISTEN/NOTIFY (docs/scaling.md "Live mail").
  const events =
    overrides.events ??
    (opened.kind === 'postgres'
      ? new PostgresInboxEvents({
          url: config.databaseUrl,
          onConnectionEvent: (state, error) =>
            state === 'lost'
              ? logger.warn({ err: error }, 'LISTEN connection lost; reconnecting, then every waiter and stream catches up from the database')
              : logger.info('LISTEN connection restored'),
        })
      : new InProcessInboxEvents());
  return { store: opened.store, rateLimiter, capacity: overrides.capacity ?? opened.capacity, events };
}

/**
 * The composition root: the one place that constructs adapters and wires them into the
 * services (inbucket's lifecycle.go). Nothing listens until start().
 */
export async function createApp(config: Config, overrides: AppOverrides = {}): Promise<App> {
  const clock = overrides.clock ?? systemClock;
  const logger = overrides.logger ?? createLogger(config.logLevel);
  const { store, rateLimiter, capacity, events } = openBackend(config, logger, overrides);
  const metrics = new Metrics();
  const plan = planSettings(config);
  const fairUse = new FairUseService(rateLimiter, config.rateLimits);

  const sessions = new SessionService(store, clock);
  const inboxes = new InboxService({ store, clock, fairUse, domains: config.domains, plan, events });
  const messages = new MessageService(store, clock, events);
  const held = new HeldRequests(config.rateLimits);
  const live = new LiveMailService({ store, clock, inboxes, events, held });
  const licenses = new LicenseService({ store, clock, fairUse, plan, events });
  const parse = createWorkerMailParser({
    ...overrides.parsePool,
    onParseError: (error) => logger.warn({ err: error }, 'MIME parse failed; stored what could be read and the raw message'),
  });
  // The authserv-id of Authentication-Results is our name in the SMTP greeting (hostname below).
  const senderAuth = config.mailAuth
    ? new MailauthSenderAuthenticator({
        serverName: config.domains[0] ?? 'localhost',
        dnsTimeoutMs: config.dnsTimeoutMs,
        dnsServers: config.dnsServers,
        onError: (error) => logger.error({ err: error }, 'sender checks failed; message stored with temperror verdicts'),
      })
    : undefined;
  const webhookStore = overrides.webhooks ?? webhookStoreOf(store);
  if (webhookStore === undefined) throw new Error('the store carries no WebhookStore; pass overrides.webhooks');
  const guard = createDestinationGuard(config);
  const sender = new WebhookSender({ guard, userAgent: webhookUserAgent(), ca: overrides.webhookCa });
  const webhookTransport: WebhookTransport = {
    checkUrl: async (url) => {
      const verdict = await guard.check(url);
      return verdict.ok ? { ok: true, url: verdict.destination.url.href } : verdict;
    },
    post: (request) => sender.attempt(request),
  };
  const webhookWorker = new WebhookWorker({
    webhooks: webhookStore,
    delivery: new WebhookDeliveryService({
      store,
      webhooks: webhookStore,
      transport: webhookTransport,
      clock,
      retryBaseSeconds: config.webhookRetryBaseSeconds,
      // The message as a check listing gives it (docs/api.md "Webhooks").
      renderMessage: (message) => JSON.stringify(presentMessage(message)),
    }),
    concurrency: config.webhookConcurrency,
    clock,
    logger,
    onOutcome: (outcome) => metrics.webhookAttempt(outcome),
  });
  const webhooks = new WebhookService({ store, webhooks: webhookStore, inboxes, transport: webhookTransport, clock, wake: () => webhookWorker.wake() });
  const delivery = new DeliveryService({
    store, clock, parse, domains: config.domains, plan, capacity, senderAuth, events,
    onStored: () => webhookWorker.wake(),
  });
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
    stall: overrides.httpStall,
    deps: {
      sessions,
      inboxes,
      messages,
      licenses,
      live,
      fairUse,
      webhooks,
      domains: config.domains,
      secureCookies: publicUrlOf(config).startsWith('https://'),
      checkReady: async () => {
        try {
          await store.ping();
        } catch (error) {
          throw new AppError('unavailable', undefined, { cause: error });
        }
        // Below MIN_FREE_DISK_BYTES the node refuses mail (452 4.3.1): not ready (docs/api.md "Storage quotas").
        if (!(await capacity.hasRoom())) throw new AppError('unavailable', 'The database disk is below its free-space minimum.');
      },
      renderMetrics: () => metrics.render(),
    },
  });

  const smtp = createSmtpListener({
    delivery,
    logger,
    maxMessageBytes: config.maxMessageBytes,
    hostname: config.domains[0],
    tls: config.tlsCertFile !== undefined && config.tlsKeyFile !== undefined ? loadTlsFiles(config.tlsCertFile, config.tlsKeyFile) : undefined,
    maxConnectionsPerAddress: config.rateLimits ? SMTP_CONNECTIONS_PER_ADDRESS : undefined,
    // Through FairUseService: shared in the database on PostgreSQL, off with RATE_LIMITS=off.
    refusedRecipients: new RefusedRecipientBudget(fairUse),
    clock,
    metrics: {
      onAccepted: (recipients, bytes) => metrics.smtpMessageAccepted(recipients, bytes),
      onRejected: (code) => metrics.smtpRejection(code),
    },
  });

  const migrate = async () => {
    try {
      await store.migrate();
    } catch (error) {
      throw databaseStartupError(config.databaseUrl, error);
    }
  };
  let started = false;
  return {
    store,
    http,
    licenses,
    delivery,
    sweeper,
    webhookWorker,
    events,
    logger,
    migrate,
    async start() {
      await migrate();
      await events.start();
      // The first free-space reading is taken now, so that no RCPT ever waits for one.
      await capacity.hasRoom();
      try {
        await http.listen({ port: config.port, host: config.host });
      } catch (error) {
        throw new StartupError('PORT', String(config.port), `a port free to listen on at HOST=${config.host}`, error);
      }
      const address = http.server.address();
      const httpPort = typeof address === 'object' && address !== null ? address.port : config.port;
      let smtpPort: number;
      try {
        smtpPort = await smtp.listen(config.smtpPort, config.host);
      } catch (error) {
        // The HTTP listener is already open: close it, so a caller that goes on (tests) leaks nothing.
        await http.close();
        throw new StartupError('SMTP_PORT', String(config.smtpPort), `a port free to listen on at HOST=${config.host}`, error);
      }
      sweeper.start();
      // Deliveries owed before this start (a crash, a restart) are looked for at once.
      webhookWorker.start();
      started = true;
      logger.info({ http_port: httpPort, smtp_port: smtpPort, domains: config.domains }, 'listening');
      return { httpPort, smtpPort };
    },
    async stop() {
      if (started) {
        // Held waits answer with what they have and streams end first: the HTTP drain below
        // waits for open requests, and these would otherwise hold it to its bound.
        held.shutdown();
        await held.drained(HELD_DRAIN_MS);
        // Stop accepting on both listeners at once; each drains its in-flight work.
        await Promise.allSettled([http.close(), smtp.close()]);
        await sweeper.stop();
        // No message can be stored any more: attempts in flight finish (bounded) or stay owed.
        await webhookWorker.stop();
      }
      // After the drain: no transaction is waiting for a parse any more.
      await parse.close();
      metrics.stop();
      await events.close();
      await store.close();
    },
  };
}
