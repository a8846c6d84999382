import { CHECK_MAX_LIMIT } from '../../src/domain/check-limits.js';
import { FakeClock } from '../../src/domain/clock.js';
import { AppError } from '../../src/domain/errors.js';
import type { PlanSettings } from '../../src/domain/plan.js';
import type { MessageView, Session } from '../../src/domain/types.js';
import { MemoryRateLimiter } from '../../src/rate-limit/memory-rate-limiter.js';
import { DeliveryService } from '../../src/services/delivery-service.js';
import type { StorageCapacity } from '../../src/ports/storage-capacity.js';
import { FairUseService } from '../../src/services/fair-use-service.js';
import { InboxService } from '../../src/services/inbox-service.js';
import { LicenseService } from '../../src/services/license-service.js';
import { MessageService } from '../../src/services/message-service.js';
import { SessionService } from '../../src/services/session-service.js';
import { SweepService } from '../../src/services/sweep-service.js';
import { MemoryMailStore } from '../../src/storage/memory/memory-mail-store.js';
import type { ParsedMail } from '../../src/domain/types.js';
import type { PageListing } from '../../src/ports/message-reads.js';
import type { CheckPage, CheckRequest } from '../../src/services/check-page.js';
import type { LiveMailService } from '../../src/services/live-mail-service.js';

/** Plan numbers of docs/api.md defaults. */
export const DEFAULT_PLAN: PlanSettings = {
  freeTtlSeconds: 1800,
  premiumTtlSeconds: 2_592_000,
  premiumMaxInboxes: 10,
  freeMaxMessages: 100,
  premiumMaxMessages: 1000,
  freeMaxBytes: 52_428_800,
  premiumMaxBytes: 524_288_000,
};

/** A trivial parser for service tests: subject from the first line, the rest is the body. */
export async function lineParser(raw: Uint8Array): Promise<ParsedMail> {
  const text = Buffer.from(raw).toString('utf8');
  const [first = '', ...rest] = text.split('\n');
  return { from: 'sender@example.org', to: '', subject: first, text: rest.join('\n'), html: null, headers: [], messageId: null, attachments: [], codes: [], links: [] };
}

/** Every service over one in-memory store and one fake clock. */
export function serviceFixture(options: { rateLimits?: boolean; plan?: Partial<PlanSettings>; domains?: string[]; capacity?: StorageCapacity } = {}) {
  const clock = new FakeClock(Date.UTC(2026, 5, 1, 12));
  const store = new MemoryMailStore();
  const plan = { ...DEFAULT_PLAN, ...options.plan };
  const domains = options.domains ?? ['tempinbox.test', 'other.test'];
  const fairUse = new FairUseService(new MemoryRateLimiter(), options.rateLimits ?? false);
  const sessions = new SessionService(store, clock);
  const fixture = {
    clock,
    store,
    plan,
    sessions,
    inboxes: new InboxService({ store, clock, fairUse, domains, plan }),
    messages: new MessageService(store, clock),
    licenses: new LicenseService({ store, clock, fairUse, plan }),
    delivery: new DeliveryService({ store, clock, parse: lineParser, domains, plan, capacity: options.capacity }),
    sweep: new SweepService(store, clock),
    /** The inbox use cases over another store (the fixture's wrapped, to count or hold its reads). */
    inboxesOver(over: MemoryMailStore): InboxService {
      return new InboxService({ store: over, clock, fairUse, domains, plan });
    },
    /** A fresh session (and its cookie token). */
    async newSession(): Promise<{ session: Session; token: string }> {
      const opened = await sessions.open(null);
      return { session: opened.session, token: opened.newToken ?? '' };
    },
    /** The messages a check with the default limit lists (measured as JSON.stringify of the view). */
    async check(session: Session, name: string, sinceId?: string): Promise<MessageView[]> {
      return (await fixture.checkPage(session, name, { sinceId, limit: CHECK_MAX_LIMIT }, (m) => Buffer.byteLength(JSON.stringify(m)))).messages;
    },
    /** A check as the route makes it for this session (readPoll, then InboxService.check), each message measured by `sizeOf`. */
    async checkPage(session: Session, name: string, request: CheckRequest, sizeOf: (message: MessageView) => number): Promise<CheckPage<MessageView>> {
      const polled = await fixture.inboxes.readPoll(session.tokenHash, name, request, true);
      return (await fixture.inboxes.check(polled, name, request, measuredBy(sizeOf))).page ?? { messages: [], hasMore: false };
    },
    /** Delivers `subject\nbody` to an address through the real delivery service. */
    async send(address: string, subject = 'hello', body = 'body'): Promise<string> {
      const recipient = await fixture.delivery.acceptRecipient(address, 0);
      const result = await fixture.delivery.deliver('sender@example.org', [recipient], Buffer.from(`${subject}\n${body}`));
      return result.messageIds[0] ?? '';
    },
  };
  return fixture;
}

const listings = new WeakMap<(message: MessageView) => number, PageListing<MessageView>>();
/**
 * The messages as read, each taking `sizeOf` bytes and a comma in the answer: one listing per
 * measure, so that checks with the same measure ask the same question (LiveMailService's key).
 */
export function measuredBy(sizeOf: (message: MessageView) => number): PageListing<MessageView> {
  let listing = listings.get(sizeOf);
  if (listing === undefined) {
    listing = { held: () => undefined, take: (message) => message, bytes: (message) => sizeOf(message) + 1 };
    listings.set(sizeOf, listing);
  }
  return listing;
}

/** A held check as the route makes it for this session (readPoll, then LiveMailService.check with `wait`). */
export async function waitForMail(
  live: LiveMailService,
  inboxes: InboxService,
  session: Session,
  name: string,
  request: CheckRequest,
  waitSeconds: number,
  sizeOf: (message: MessageView) => number,
  clientAddress: string,
): Promise<CheckPage<MessageView>> {
  const polled = await inboxes.readPoll(session.tokenHash, name, request, true);
  return (await live.check(polled, name, request, measuredBy(sizeOf), { waitSeconds, clientAddress })).page ?? { messages: [], hasMore: false };
}

/** The catalog code a use case failed with, or 'no error'. */
export async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AppError) return error.code;
    throw error;
  }
  return 'no error';
}
