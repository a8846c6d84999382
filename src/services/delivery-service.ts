import { parseRecipient } from '../domain/address.js';
import type { Clock } from '../domain/clock.js';
import type { SenderAuth } from '../domain/sender-auth.js';
import { renameClaimedAuthenticationResults } from '../domain/claimed-authentication-results.js';
import { AppError } from '../domain/errors.js';
import { withPrefix } from '../domain/message-bytes.js';
import { byteCap, isInboxActive, messageCap, type PlanSettings } from '../domain/plan.js';
import type { InboxEvents } from '../ports/inbox-events.js';
import type { InsertOutcome, StorePolicy } from '../ports/message-writes.js';
import type { InboxStore } from '../ports/inbox-store.js';
import type { MessageWrites } from '../ports/message-writes.js';
import type { MailParser } from '../ports/mail-parser.js';
import type { SenderAuthenticator } from '../ports/sender-auth.js';
import { UNLIMITED_CAPACITY, type StorageCapacity } from '../ports/storage-capacity.js';

/** The local part that is always accepted on every served domain (RFC 5321 §4.5.1). */
export const POSTMASTER = 'postmaster';

/** RFC 5321 §4.5.3.1.8 asks servers to take at least 100; 50 keeps one message's fan-out bounded. */
export const MAX_RECIPIENTS_PER_MESSAGE = 50;

/**
 * Postmaster messages deleted per delivery at most. Each delivery adds one, so one goes per
 * delivery once the inbox is full; the margin catches up after PREMIUM_MAX_MESSAGES is
 * lowered, without one delivery deleting thousands of rows in one transaction.
 */
export const POSTMASTER_TRIM_BATCH = 100;

/** A recipient accepted at RCPT TO: where the message will go. */
export interface AcceptedRecipient {
  /** The address as the client gave it. */
  address: string;
  /** The inbox it delivers to; null for postmaster@ (stored in the postmaster inbox). */
  inboxId: string | null;
}

/** Outcome of DATA: how many inboxes got the message, and how many refused it at store time. */
export interface DeliveryResult {
  delivered: number;
  messageIds: string[];
  /** Inboxes that were full, expired or gone when the message was stored. */
  refused: number;
}

/** Dependencies of the delivery use case. */
export interface DeliveryServiceDeps {
  store: InboxStore & MessageWrites;
  clock: Clock;
  parse: MailParser;
  domains: readonly string[];
  plan: PlanSettings;
  /** Free space of the store's disk (MIN_FREE_DISK_BYTES); none: always room. */
  capacity?: StorageCapacity;
  /** SPF/DKIM/DMARC/ARC checks; none: not checked (MAIL_AUTH=off, `auth` null). */
  senderAuth?: SenderAuthenticator;
  /** Told of each stored copy after its commit (waiters and event streams); none: nobody listens. */
  events?: InboxEvents;
  /** Told after a message is committed to at least one inbox: the webhook worker looks for what it owes at once. */
  onStored?: () => void;
}

/** What the SMTP transaction adds to the received bytes: who sent them, and our trace lines. */
export interface TransactionInfo {
  /** Return-Path and Received lines (RFC 5321 §4.4), CRLF-ended, stored in front of the message. */
  trace: Uint8Array;
  /** The client's IP address as seen on the socket. */
  clientAddress: string;
  /** The name the client gave in HELO/EHLO. */
  helo: string;
}

/**
 * Inbound mail, protocol-free: decides each recipient at RCPT time and stores the message
 * at DATA time. Failures are AppErrors whose codes smtp/replies.ts turns into SMTP replies.
 */
export class DeliveryService {
  constructor(private readonly deps: DeliveryServiceDeps) {}

  /**
   * Decides one `RCPT TO`. `alreadyAccepted` is how many recipients this transaction has.
   * Throws: invalid_domain (550 5.7.1 relay denied), inbox_not_found / inbox_expired
   * (550 5.1.1), inbox_full (452 4.2.2: at its message or byte cap), too_many_recipients
   * (452 4.5.3), invalid_request, storage_full (452 4.3.1: the disk is below
   * MIN_FREE_DISK_BYTES, for every recipient). The caps are checked again when the message is stored.
   */
  async acceptRecipient(address: string, alreadyAccepted: number): Promise<AcceptedRecipient> {
    // A cached reading, refreshed off the hot path (storage/disk-space-monitor.ts).
    if (!(await (this.deps.capacity ?? UNLIMITED_CAPACITY).hasRoom())) throw new AppError('storage_full');
    if (alreadyAccepted >= MAX_RECIPIENTS_PER_MESSAGE) throw new AppError('too_many_recipients');
    // RFC 5321 §4.5.1: the bare, domain-less "postmaster" must be accepted too.
    if (address.toLowerCase() === POSTMASTER) return { address, inboxId: null };
    const parsed = parseRecipient(address);
    if (parsed === null) throw new AppError('invalid_request', 'Not a valid mailbox address.');
    if (!this.deps.domains.includes(parsed.domain)) throw new AppError('invalid_domain', 'Relay access denied.');
    if (parsed.username === POSTMASTER) return { address, inboxId: null };

    // One read: the inbox and its stored usage.
    const found = await this.deps.store.findInboxWithUsage(parsed.username);
    const now = this.deps.clock.now();
    // The domain must match too: name@other-served-domain is a different address.
    if (found === null || found.inbox.domain !== parsed.domain) throw new AppError('inbox_not_found', 'No such mailbox.');
    const { inbox, usage } = found;
    if (!isInboxActive(inbox.expiresAt, now)) throw new AppError('inbox_expired', 'No such mailbox.');
    const premium = inbox.licenseId !== null;
    if (usage.messages >= messageCap(this.deps.plan, premium) || usage.bytes >= byteCap(this.deps.plan, premium)) {
      throw new AppError('inbox_full');
    }
    return { address, inboxId: inbox.id };
  }

  /**
   * Parses and stores a message for every accepted recipient; resolves only once it is
   * committed (the SMTP adapter answers 250 after that). Several recipients in the same
   * inbox get one copy. Postmaster mail goes to the postmaster inbox (see ensurePostmasterInbox).
   * The store decides each inbox again (caps, expiry) in the transaction that writes. When
   * no inbox got the message it throws: inbox_full when any was full (452 4.2.2),
   * inbox_expired when any had expired (450 4.2.1 after DATA), else inbox_not_found.
   * When at least one inbox got it, the others are only logged (one reply after DATA).
   * With `transaction` (SMTP), the sender checks run on the received bytes first, and the
   * stored message is the trace lines, then the Authentication-Results header, then `received`
   * (with any Authentication-Results field in it under our name renamed).
   */
  async deliver(envelopeFrom: string, recipients: AcceptedRecipient[], received: Uint8Array, transaction?: TransactionInfo): Promise<DeliveryResult> {
    const inboxIds = new Set<string>();
    // The first accepted address of each inbox is its copy's `recipient` (one copy per inbox).
    const addresses = new Map<string, string>();
    let postmasterId: string | null = null;
    for (const recipient of recipients) {
      const inboxId = recipient.inboxId ?? (postmasterId ??= await this.postmasterInboxId());
      inboxIds.add(inboxId);
      if (!addresses.has(inboxId)) addresses.set(inboxId, recipient.address.toLowerCase());
    }
    const first = recipients[0]?.address ?? '';
    const { raw, auth } = await this.authenticate(envelopeFrom, received, transaction);
    const parsed = await this.deps.parse(raw, { envelopeFrom, recipient: first });
    const now = this.deps.clock.now();
    const outcomes = await this.deps.store.insertMessage({ envelopeFrom, parsed, raw, receivedAt: now, auth, recipients: addresses }, [...inboxIds], this.storePolicy(now, postmasterId));
    const messageIds = storedIds(outcomes);
    if (messageIds.length === 0) throw refusal(outcomes);
    // insertMessage has resolved: the copies are committed, so a woken reader finds them.
    for (const [inboxId, outcome] of outcomes) if (outcome.status === 'stored') this.deps.events?.publish({ type: 'message', inboxId });
    this.deps.onStored?.();
    if (postmasterId !== null) await this.trimPostmaster(postmasterId);
    return { delivered: messageIds.length, messageIds, refused: outcomes.size - messageIds.length };
  }

  /**
   * The sender checks of an SMTP transaction (never a refusal: their verdicts are shown, the
   * message is delivered whatever they say) and the bytes to store: RFC 8601 §5 puts the
   * Authentication-Results header above the received ones, below our own trace lines, and has
   * any such field that came with the message under our name (a served domain: the first is
   * our authserv-id) renamed, so that only ours reads as ours, whether the checks run or not.
   * The checks read the bytes as received (a DKIM signature may cover those fields).
   */
  private async authenticate(envelopeFrom: string, received: Uint8Array, transaction: TransactionInfo | undefined): Promise<{ raw: Uint8Array; auth: SenderAuth | null }> {
    if (transaction === undefined) return { raw: received, auth: null };
    const { senderAuth } = this.deps;
    const outcome = senderAuth === undefined
      ? undefined
      : await senderAuth.check({ message: received, clientAddress: transaction.clientAddress, helo: transaction.helo, envelopeFrom });
    const kept = renameClaimedAuthenticationResults(received, this.deps.domains);
    // In the room the listener left in front of `received` (domain/message-bytes.ts): no copy.
    return { raw: withPrefix([transaction.trace, outcome?.header ?? new Uint8Array(0)], kept), auth: outcome?.auth ?? null };
  }

  /** The caps of the plan at `now`; the postmaster inbox has none (it is trimmed instead). */
  private storePolicy(now: Date, postmasterId: string | null): StorePolicy {
    const { plan } = this.deps;
    return {
      now,
      free: { maxMessages: plan.freeMaxMessages, maxBytes: plan.freeMaxBytes },
      premium: { maxMessages: plan.premiumMaxMessages, maxBytes: plan.premiumMaxBytes },
      unlimited: postmasterId === null ? [] : [postmasterId],
    };
  }

  /**
   * postmaster@ must always be accepted, so its inbox cannot answer 452 when full; instead it
   * keeps only its newest PREMIUM_MAX_MESSAGES messages, so mail to it cannot fill the disk.
   * One bounded store statement: nothing is read, and at most POSTMASTER_TRIM_BATCH go at once.
   */
  private async trimPostmaster(inboxId: string): Promise<void> {
    await this.deps.store.trimMessages(inboxId, this.deps.plan.premiumMaxMessages, POSTMASTER_TRIM_BATCH);
  }

  /**
   * The inbox holding mail to postmaster@ (any served domain). It is reserved, owned by no
   * session, never expires, keeps its newest PREMIUM_MAX_MESSAGES messages, and
   * `tempinbox postmaster` lets the operator read it.
   */
  async postmasterInboxId(): Promise<string> {
    const existing = await this.deps.store.findInboxByUsername(POSTMASTER);
    if (existing !== null) return existing.id;
    const now = this.deps.clock.now();
    const inbox = {
      id: POSTMASTER_INBOX_ID,
      username: POSTMASTER,
      domain: this.deps.domains[0] ?? 'localhost',
      createdAt: now,
      expiresAt: NEVER,
      sessionId: null,
      licenseId: null,
    };
    await this.deps.store.insertInbox(inbox, now);
    return (await this.deps.store.findInboxByUsername(POSTMASTER))?.id ?? POSTMASTER_INBOX_ID;
  }
}

/** The ids of the stored copies. */
function storedIds(outcomes: Map<string, InsertOutcome>): string[] {
  return [...outcomes.values()].flatMap((outcome) => (outcome.status === 'stored' ? [outcome.messageId] : []));
}

/** Why nobody got the message: a full inbox may take it later, so that wins over expiry. */
function refusal(outcomes: Map<string, InsertOutcome>): AppError {
  const statuses = new Set([...outcomes.values()].map((outcome) => outcome.status));
  if (statuses.has('full')) return new AppError('inbox_full');
  if (statuses.has('expired')) return new AppError('inbox_expired', 'The mailbox expired during the transaction.');
  return new AppError('inbox_not_found', 'No such mailbox.');
}

/** Fixed id of the postmaster inbox, so that concurrent first deliveries agree on it. */
export const POSTMASTER_INBOX_ID = 'postmaster-inbox-0000';
/** The postmaster inbox never expires (year 9999). */
const NEVER = new Date(Date.UTC(9999, 0, 1));
