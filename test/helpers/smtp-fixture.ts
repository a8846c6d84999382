import { pino } from 'pino';
import { FakeClock } from '../../src/domain/clock.js';
import { newId } from '../../src/domain/ids.js';
import type { Inbox, MessageView, ParsedMail } from '../../src/domain/types.js';
import { parseMail } from '../../src/mail/parse-mail.js';
import { SMTP_REFUSED_RECIPIENTS_PER_NETWORK } from '../../src/domain/fair-use.js';
import type { RateLimiter } from '../../src/ports/rate-limiter.js';
import { MemoryRateLimiter } from '../../src/rate-limit/memory-rate-limiter.js';
import { DeliveryService } from '../../src/services/delivery-service.js';
import { FairUseService } from '../../src/services/fair-use-service.js';
import { RefusedRecipientBudget } from '../../src/services/refused-recipient-budget.js';
import type { ConnectionLimits } from '../../src/smtp/connection-policy.js';
import { createSmtpListener, type SmtpListener } from '../../src/smtp/smtp-listener.js';
import { MemoryMailStore } from '../../src/storage/memory/memory-mail-store.js';
import { listMessages } from './store-reads.js';

/** Domains the test MX serves; the first is the default. */
export const TEST_DOMAINS = ['tempinbox.test', 'other-served.test'];
/** Small caps so "full" and "too large" are cheap to reach. */
export const TEST_PLAN = {
  freeTtlSeconds: 1800,
  premiumTtlSeconds: 2_592_000,
  premiumMaxInboxes: 10,
  freeMaxMessages: 2,
  premiumMaxMessages: 5,
  freeMaxBytes: 1_000_000,
  premiumMaxBytes: 5_000_000,
};
export const TEST_MAX_MESSAGE_BYTES = 10_000;

/** A real listener on port 0 over a real DeliveryService and a memory store. */
export interface SmtpFixture {
  port: number;
  store: MemoryMailStore;
  clock: FakeClock;
  listener: SmtpListener;
  /** Every log line the listener wrote, as JSON text. */
  logs: string[];
  /** Creates an inbox directly in the store; `ttlSeconds` < 0 makes it expired. */
  inbox(username: string, options?: { domain?: string; ttlSeconds?: number; licenseId?: string }): Promise<Inbox>;
  /** Fills an inbox with `count` stored messages. */
  fill(inbox: Inbox, count: number): Promise<void>;
  messagesOf(inbox: Inbox): Promise<MessageView[]>;
  rawOf(messageId: string): Promise<string>;
  close(): Promise<void>;
}

/** fill() writes past the caps when asked to: it sets up a state, it does not deliver. */
const UNCAPPED = { maxMessages: Number.MAX_SAFE_INTEGER, maxBytes: Number.MAX_SAFE_INTEGER };

const EMPTY_PARSE: ParsedMail = { from: '', to: '', subject: '', text: '', html: null, headers: [], messageId: null, attachments: [], codes: [], links: [] };

/** Starts the fixture; `store` lets a test pass a failing or slow subclass. */
export async function startSmtpFixture(
  options: {
    store?: MemoryMailStore;
    tls?: { key: Buffer; cert: Buffer };
    maxMessageBytes?: number;
    maxConnectionsPerAddress?: number;
    /** Small connection limits for tests; production keeps the named constants. */
    limits?: Partial<ConnectionLimits>;
    /** Refused recipients a client network may cause (fair use on); default: no budget. */
    refusedPerNetwork?: number;
    /** Where that budget is counted; default in memory (PostgresRateLimiter: shared by nodes). */
    rateLimiter?: RateLimiter;
  } = {},
): Promise<SmtpFixture> {
  const store = options.store ?? new MemoryMailStore();
  const clock = new FakeClock();
  const logs: string[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void logs.push(line) });
  const delivery = new DeliveryService({ store, clock, parse: parseMail, domains: TEST_DOMAINS, plan: TEST_PLAN });
  const listener = createSmtpListener({
    delivery,
    logger,
    maxMessageBytes: options.maxMessageBytes ?? TEST_MAX_MESSAGE_BYTES,
    hostname: 'mx.tempinbox.test',
    tls: options.tls,
    maxConnectionsPerAddress: options.maxConnectionsPerAddress,
    limits: options.limits,
    clock,
    refusedRecipients:
      options.refusedPerNetwork === undefined
        ? undefined
        : new RefusedRecipientBudget(new FairUseService(options.rateLimiter ?? new MemoryRateLimiter(), true), {
            ...SMTP_REFUSED_RECIPIENTS_PER_NETWORK,
            points: options.refusedPerNetwork,
          }),
  });
  const port = await listener.listen(0, '127.0.0.1');

  return {
    port,
    store,
    clock,
    listener,
    logs,
    async inbox(username, { domain = TEST_DOMAINS[0] ?? '', ttlSeconds = 600, licenseId } = {}) {
      const now = clock.now();
      const inbox: Inbox = {
        id: newId(),
        username,
        domain,
        createdAt: new Date(now.getTime() - 3_600_000),
        expiresAt: new Date(now.getTime() + ttlSeconds * 1000),
        sessionId: null,
        licenseId: licenseId ?? null,
      };
      const result = await store.insertInbox(inbox, now);
      if (result !== 'created') throw new Error(`fixture: inbox ${username} not created (${result})`);
      return inbox;
    },
    async fill(inbox, count) {
      for (let i = 0; i < count; i += 1) {
        const raw = new TextEncoder().encode(`Subject: filler ${i}\r\n\r\nfiller\r\n`);
        const now = clock.now();
        await store.insertMessage({ envelopeFrom: 'filler@example.org', parsed: EMPTY_PARSE, raw, receivedAt: now }, [inbox.id], { now, free: UNCAPPED, premium: UNCAPPED });
      }
    },
    messagesOf: (inbox) => listMessages(store, inbox.id),
    async rawOf(messageId) {
      const found = await store.findRawMessage(messageId);
      if (found === null) throw new Error(`fixture: no raw message ${messageId}`);
      return Buffer.from(found.raw).toString('utf8');
    },
    close: () => listener.close(),
  };
}
