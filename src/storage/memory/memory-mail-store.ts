import { newId } from '../../domain/ids.js';
import type {
  AttachmentContent,
  AttachmentInfo,
  Inbox,
  InboxWithCount,
  License,
  LicenseUsage,
  MailHeader,
  MessageDetail,
  MessageView,
  NewMessage,
  Owner,
  Session,
  SweepCounts,
} from '../../domain/types.js';
import { cutText } from '../../domain/text-cut.js';
import { foldFilter, fromMatchKey, matchKey, type FoldedFilter } from '../../domain/match-key.js';
import { copyVerdict } from '../../domain/plan.js';
import { owns } from '../../domain/ownership.js';
import {
  StoreFailureError,
  StoreUnavailableError,
  type FreeInboxResult,
  type InboxUsage,
  type InsertInboxResult,
  type InsertLicenseInboxResult,
  type InsertOutcome,
  type MailStore,
  type RedeemRules,
  type RedeemStatus,
  type StorePolicy,
  type MessagePage,
  type PageListing,
  type PageQuery,
  type InboxMark,
  type InboxPoll,
  type PollQuery,
  type RecountQuery,
  type RecountResult,
} from '../../ports/mail-store.js';
import { assemblePage, type PageIds } from '../page-assembly.js';
import { MemoryWebhookStore } from './memory-webhook-store.js';

/** A received message, shared by its copies (the SQL `contents` row). */
interface StoredContent {
  envelopeFrom: string;
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string | null;
  headers: MailHeader[];
  size: number;
  raw: Uint8Array;
  attachments: (AttachmentInfo & { content: Uint8Array })[];
  /** What the message tells (the SQL `message_insights` row), stored as copies. */
  insights: Pick<MessageView, 'codes' | 'links' | 'auth'>;
  /** Copies still referring to it; the content goes with the last one. */
  copies: number;
}

/** One copy of a content in one inbox (the SQL `messages` row). */
interface StoredMessage {
  seq: number;
  id: string;
  inboxId: string;
  contentId: string;
  receivedAt: number;
  /** The envelope address of this copy; '' when unknown. */
  recipient: string;
  /** The match keys of the filters, as the SQL store stores them (domain/match-key.ts). */
  keys: FoldedFilter;
}

const copyDate = (date: Date): Date => new Date(date.getTime());
const copySession = (s: Session): Session => ({ ...s, createdAt: copyDate(s.createdAt), expiresAt: copyDate(s.expiresAt) });
const copyLicense = (l: License): License => ({
  ...l,
  createdAt: copyDate(l.createdAt),
  validUntil: copyDate(l.validUntil),
  revokedAt: l.revokedAt === null ? null : copyDate(l.revokedAt),
});
const copyInbox = (i: Inbox): Inbox => ({
  id: i.id,
  username: i.username,
  domain: i.domain,
  createdAt: copyDate(i.createdAt),
  expiresAt: copyDate(i.expiresAt),
  sessionId: i.sessionId,
  licenseId: i.licenseId,
});

/**
 * The in-memory fake of MailStore for unit tests: the same contract suite as the SQL store
 * pins its semantics. Dates, arrays and bytes are copied in and out, so callers can never
 * change stored state by mutating what they passed or got back.
 */
export class MemoryMailStore implements MailStore {
  private readonly sessions = new Map<string, Session>();
  /** token hash → session id (the unique index on sessions.token_hash). */
  private readonly sessionByToken = new Map<string, string>();
  private readonly licenses = new Map<string, License>();
  private readonly inboxes = new Map<string, Inbox>();
  /** username → inbox id (the unique index on inboxes.username). */
  private readonly inboxByUsername = new Map<string, string>();
  private readonly contents = new Map<string, StoredContent>();
  private readonly messages = new Map<string, StoredMessage>();
  /** Copies per inbox in seq order (the (inbox_id, seq) index). */
  private readonly byInbox = new Map<string, StoredMessage[]>();
  /** Messages and raw bytes per inbox (the SQL inboxes row's usage counters); absent: none. */
  private readonly usage = new Map<string, InboxUsage>();
  private nextSeq = 1;
  private closed = false;
  /** The inboxes' webhooks and the deliveries they are owed (WebhookStore), kept with the messages. */
  readonly webhooks = new MemoryWebhookStore({
    addressOf: (inboxId) => {
      const inbox = this.inboxes.get(inboxId);
      return inbox === undefined ? undefined : `${inbox.username}@${inbox.domain}`;
    },
    op: (work) => this.op(work),
  });

  migrate(): Promise<void> {
    return this.op(() => undefined);
  }

  ping(): Promise<void> {
    return this.op(() => undefined);
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }

  // --- sessions ---------------------------------------------------------------------------

  insertSession(session: Session): Promise<void> {
    return this.op(() => {
      if (this.sessions.has(session.id) || this.sessionByToken.has(session.tokenHash)) {
        throw new StoreFailureError('insertSession failed: duplicate session id or token hash');
      }
      this.sessions.set(session.id, copySession(session));
      this.sessionByToken.set(session.tokenHash, session.id);
    });
  }

  insertSessionWithInbox(session: Session, inbox: Inbox, now: Date): Promise<InsertInboxResult> {
    return this.op(() => {
      if (this.sessions.has(session.id) || this.sessionByToken.has(session.tokenHash)) {
        throw new StoreFailureError('insertSessionWithInbox failed: duplicate session id or token hash');
      }
      // One synchronous step: the inbox decides, and the session is stored only with it.
      if (this.insertInboxNow(inbox, now) === 'taken') return 'taken';
      this.sessions.set(session.id, copySession(session));
      this.sessionByToken.set(session.tokenHash, session.id);
      return 'created';
    });
  }

  findSession(tokenHash: string, now: Date): Promise<Session | null> {
    return this.op(() => {
      const session = this.sessions.get(this.sessionByToken.get(tokenHash) ?? '');
      return session !== undefined && session.expiresAt.getTime() > now.getTime() ? copySession(session) : null;
    });
  }

  renewSession(sessionId: string, expiresAt: Date): Promise<void> {
    return this.op(() => {
      const session = this.sessions.get(sessionId);
      if (session !== undefined) session.expiresAt = copyDate(expiresAt);
    });
  }

  redeemLicense(sessionId: string, licenseId: string, now: Date, rules: RedeemRules): Promise<RedeemStatus> {
    // One synchronous step: nothing else runs between the count and the write.
    return this.op(() => {
      const session = this.sessions.get(sessionId);
      const license = this.licenses.get(licenseId);
      if (session === undefined || license === undefined) return 'no_license';
      const at = now.getTime();
      let status: RedeemStatus = 'already_redeemed';
      if (session.licenseId !== licenseId) {
        if (this.sessionsOf(licenseId, at) >= license.maxSessions) return 'session_limit';
        session.licenseId = licenseId;
        status = 'redeemed';
      }
      let active = this.activeInboxesOf(licenseId, at);
      const free = [...this.inboxes.values()]
        .filter((i) => i.sessionId === sessionId && i.licenseId === null && i.expiresAt.getTime() > at)
        .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || compareIds(b.id, a.id));
      for (const inbox of free) {
        if (active >= rules.maxInboxes) break;
        inbox.licenseId = licenseId;
        inbox.expiresAt = new Date(inbox.createdAt.getTime() + rules.premiumTtlMs);
        active += 1;
      }
      return status;
    });
  }

  // --- licenses ---------------------------------------------------------------------------

  insertLicenses(licenses: License[]): Promise<void> {
    return this.op(() => {
      const ids = new Set(this.licenses.keys());
      const hashes = new Set([...this.licenses.values()].map((l) => l.keyHash));
      // All or nothing, like the SQL transaction.
      for (const license of licenses) {
        if (ids.has(license.id) || hashes.has(license.keyHash)) {
          throw new StoreFailureError('insertLicenses failed: duplicate license id or key hash');
        }
        ids.add(license.id);
        hashes.add(license.keyHash);
      }
      for (const license of licenses) this.licenses.set(license.id, copyLicense(license));
    });
  }

  findLicenseByKeyHash(keyHash: string): Promise<License | null> {
    return this.op(() => {
      const license = [...this.licenses.values()].find((l) => l.keyHash === keyHash);
      return license === undefined ? null : copyLicense(license);
    });
  }

  findLicenseById(licenseId: string): Promise<License | null> {
    return this.op(() => {
      const license = this.licenses.get(licenseId);
      return license === undefined ? null : copyLicense(license);
    });
  }

  listLicenses(now: Date): Promise<LicenseUsage[]> {
    return this.op(() =>
      [...this.licenses.values()]
        .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || compareIds(a.id, b.id))
        .map((license) => ({
          ...copyLicense(license),
          sessions: this.sessionsOf(license.id, now.getTime()),
          activeInboxes: this.activeInboxesOf(license.id, now.getTime()),
        })),
    );
  }

  revokeLicense(keyHash: string, at: Date): Promise<boolean> {
    return this.op(() => {
      const license = [...this.licenses.values()].find((l) => l.keyHash === keyHash);
      if (license === undefined) return false;
      // Revoking twice keeps the first instant.
      license.revokedAt ??= copyDate(at);
      return true;
    });
  }

  // --- inboxes ----------------------------------------------------------------------------

  insertInbox(inbox: Inbox, now: Date): Promise<InsertInboxResult> {
    return this.op(() => this.insertInboxNow(inbox, now));
  }

  getOrCreateFreeInbox(inbox: Inbox, owner: Owner, now: Date): Promise<FreeInboxResult> {
    return this.op(() => {
      const current = this.activeInboxesOfOwner(owner, now.getTime())[0];
      if (current !== undefined) return { status: 'existing', inbox: copyInbox(current) };
      return this.insertInboxNow(inbox, now) === 'created' ? { status: 'created', inbox: copyInbox(inbox) } : { status: 'taken' };
    });
  }

  insertLicenseInbox(inbox: Inbox & { licenseId: string }, now: Date, maxInboxes: number): Promise<InsertLicenseInboxResult> {
    return this.op(() => {
      if (this.activeInboxesOf(inbox.licenseId, now.getTime()) >= maxInboxes) return 'limit_reached';
      return this.insertInboxNow(inbox, now);
    });
  }

  /** insertInbox's work, synchronous so other operations can run it inside their own step. */
  private insertInboxNow(inbox: Inbox, now: Date): InsertInboxResult {
    const holder = this.findByUsername(inbox.username);
    const holderExpired = holder !== undefined && holder.expiresAt.getTime() <= now.getTime();
    if (holder !== undefined && !holderExpired) return 'taken';
    // An id clash is a unique violation in SQL too (the expired holder may be that very id).
    if (this.inboxes.has(inbox.id) && !(holderExpired && holder.id === inbox.id)) return 'taken';
    if (holder !== undefined) this.removeInbox(holder.id);
    this.inboxes.set(inbox.id, copyInbox(inbox));
    this.inboxByUsername.set(inbox.username, inbox.id);
    return 'created';
  }

  findInboxByUsername(username: string): Promise<Inbox | null> {
    return this.op(() => {
      const inbox = this.findByUsername(username);
      return inbox === undefined ? null : copyInbox(inbox);
    });
  }

  findInboxWithUsage(username: string): Promise<{ inbox: Inbox; usage: InboxUsage } | null> {
    return this.op(() => {
      const inbox = this.findByUsername(username);
      return inbox === undefined ? null : { inbox: copyInbox(inbox), usage: this.usageOf(inbox.id) };
    });
  }

  findInboxById(inboxId: string): Promise<Inbox | null> {
    return this.op(() => {
      const inbox = this.inboxes.get(inboxId);
      return inbox === undefined ? null : copyInbox(inbox);
    });
  }

  listActiveInboxes(owner: Owner, now: Date): Promise<InboxWithCount[]> {
    return this.op(() =>
      this.activeInboxesOfOwner(owner, now.getTime()).map((i) => ({ ...copyInbox(i), messageCount: this.usageOf(i.id).messages })),
    );
  }

  deleteInbox(inboxId: string): Promise<boolean> {
    return this.op(() => {
      if (!this.inboxes.has(inboxId)) return false;
      this.removeInbox(inboxId);
      return true;
    });
  }

  // --- messages ---------------------------------------------------------------------------

  recountUsage(query: RecountQuery): Promise<RecountResult> {
    // One synchronous step, like the SQL store's one transaction per batch.
    return this.op(() => {
      const limit = Math.max(0, Math.floor(query.limit));
      const { afterId } = query;
      const batch = [...this.inboxes.keys()]
        .filter((id) => afterId === undefined || compareIds(id, afterId) > 0)
        .sort(compareIds)
        .slice(0, limit);
      let corrected = 0;
      for (const id of batch) {
        const list = this.byInbox.get(id) ?? [];
        const actual = { messages: list.length, bytes: list.reduce((sum, message) => sum + this.content(message).size, 0) };
        const stored = this.usageOf(id);
        if (stored.messages === actual.messages && stored.bytes === actual.bytes) continue;
        this.usage.set(id, actual);
        corrected += 1;
      }
      return { checked: batch.length, corrected, lastId: batch.at(-1) };
    });
  }

  /**
   * Test hook: overwrites an inbox's stored usage and nothing else, as a node of a release
   * before the counters leaves it (docs/scaling.md "Migrations"); recountUsage sets it right.
   * The SQL stores' tests do the same with an UPDATE of their own.
   */
  overwriteStoredUsage(inboxId: string, usage: InboxUsage): void {
    this.usage.set(inboxId, { ...usage });
  }

  insertMessage(message: NewMessage, inboxIds: string[], policy: StorePolicy): Promise<Map<string, InsertOutcome>> {
    // One synchronous step: the quota check and the write cannot interleave with another delivery.
    return this.op(() => {
      const outcomes = new Map<string, InsertOutcome>();
      const size = message.raw.byteLength;
      const unlimited = new Set(policy.unlimited ?? []);
      for (const id of new Set(inboxIds)) {
        const inbox = this.inboxes.get(id);
        const found = inbox === undefined ? undefined : { expiresAt: inbox.expiresAt.getTime(), licensed: inbox.licenseId !== null };
        const verdict = copyVerdict(found, policy.now.getTime(), unlimited.has(id) ? null : this.usageOf(id), size, policy);
        if (verdict !== 'store') outcomes.set(id, { status: verdict });
      }
      const targets = [...new Set(inboxIds)].filter((id) => !outcomes.has(id));
      if (targets.length === 0) return outcomes;
      const { parsed } = message;
      const contentId = newId();
      this.contents.set(contentId, {
        envelopeFrom: message.envelopeFrom,
        from: parsed.from,
        to: parsed.to,
        subject: parsed.subject,
        text: parsed.text,
        html: parsed.html,
        headers: parsed.headers.map(({ name, value }) => ({ name, value })),
        size: message.raw.byteLength,
        raw: new Uint8Array(message.raw),
        attachments: parsed.attachments.map((a) => ({
          id: newId(),
          filename: a.filename,
          contentType: a.contentType,
          size: a.content.byteLength,
          content: new Uint8Array(a.content),
        })),
        insights: structuredClone({ codes: parsed.codes, links: parsed.links, auth: message.auth ?? null }),
        copies: targets.length,
      });
      const from = fromMatchKey(parsed.from, message.envelopeFrom);
      const subject = matchKey(parsed.subject);
      for (const inboxId of targets) {
        const recipient = message.recipients?.get(inboxId) ?? '';
        const inbox = this.inboxes.get(inboxId);
        const to = matchKey(recipient !== '' || inbox === undefined ? recipient : `${inbox.username}@${inbox.domain}`);
        const copy: StoredMessage = { seq: this.nextSeq++, id: newId(), inboxId, contentId,
          receivedAt: message.receivedAt.getTime(),
          recipient,
          keys: { to, from, subject },
        };
        this.messages.set(copy.id, copy);
        const list = this.byInbox.get(inboxId) ?? [];
        list.push(copy);
        this.byInbox.set(inboxId, list);
        this.addUsage(inboxId, 1, size);
        this.webhooks.owe(inboxId, copy.id, policy.now.getTime());
        outcomes.set(inboxId, { status: 'stored', messageId: copy.id });
      }
      // In the order the inboxes were given, like the SQL store.
      return new Map([...new Set(inboxIds)].map((id) => [id, outcomes.get(id) ?? { status: 'missing' }]));
    });
  }

  markInbox(inboxId: string, sinceId?: string): Promise<InboxMark> {
    return this.op(() => {
      const list = this.byInbox.get(inboxId) ?? [];
      const newest = list.at(-1)?.seq ?? 0;
      const sum = list.reduce((total, message) => total + message.seq, 0);
      const since = sinceId === undefined ? undefined : this.messages.get(sinceId);
      const nothingSince = since !== undefined && since.inboxId === inboxId && since.seq >= newest;
      return { count: list.length, version: `${list.length}.${newest}.${sum}`, nothingSince };
    });
  }

  /**
   * The separate reads, all started in one synchronous stretch (each op runs its work at
   * once), so that nothing lands between them: one instant, as one SQL statement sees.
   */
  async pollInbox(query: PollQuery): Promise<InboxPoll> {
    if (this.closed) throw new StoreUnavailableError('the store is closed');
    const { tokenHash, username, now, sinceId, idLimit = 0 } = query;
    const session = this.sessions.get(this.sessionByToken.get(tokenHash) ?? '');
    if (session === undefined || session.expiresAt.getTime() <= now.getTime()) return { session: null, inbox: null, mark: null, ids: null };
    const found = username === '' ? undefined : this.findByUsername(username);
    const inbox = found !== undefined && owns(session, found) ? found : undefined;
    if (inbox === undefined) return { session: copySession(session), inbox: null, mark: null, ids: null };
    if (inbox.expiresAt.getTime() <= now.getTime()) return { session: copySession(session), inbox: copyInbox(inbox), mark: null, ids: null };
    const mark = this.markInbox(inbox.id, sinceId);
    // pageIds reads one more than its limit.
    const ids = idLimit > 0 ? this.pageIds(inbox.id, { sinceId, limit: idLimit - 1 }).ids : null;
    return { session: copySession(session), inbox: copyInbox(inbox), mark: await mark, ids: ids === null ? null : [...ids] };
  }

  readPage<T>(inboxId: string, query: PageQuery, listing: PageListing<T>): Promise<MessagePage<T>> {
    const cut = Math.max(0, Math.floor(query.maxFieldBytes));
    const bodies = (ids: readonly string[]) =>
      this.op(() => ids.map((id) => this.messages.get(id)).flatMap((message) => (message?.inboxId === inboxId ? [this.cutView(message, cut)] : [])));
    return this.op(() => (query.ids !== undefined ? { ids: query.ids, beforeFound: true } : this.pageIds(inboxId, query))).then((found) =>
      assemblePage(found, query, listing, bodies),
    );
  }

  /** The ids of a page, `limit` + 1 of them, as the SQL store reads them from its index. */
  private pageIds(inboxId: string, query: Omit<PageQuery, 'maxFieldBytes'>): PageIds {
    const list = this.byInbox.get(inboxId) ?? [];
    const seqOf = (id: string | undefined) => {
      const message = id === undefined ? undefined : this.messages.get(id);
      return message !== undefined && message.inboxId === inboxId ? message.seq : undefined;
    };
    const cursor = query.afterId === undefined ? 0 : seqOf(query.afterId);
    const afterFound = query.afterId === undefined ? {} : { afterFound: cursor !== undefined };
    const before = query.beforeId === undefined ? Infinity : seqOf(query.beforeId);
    if (before === undefined) return { ids: [], beforeFound: false, ...afterFound };
    if (cursor === undefined) return { ids: [], beforeFound: true, afterFound: false };
    const after = Math.max(seqOf(query.sinceId) ?? 0, cursor);
    const limit = Math.max(0, Math.floor(query.limit)) + 1;
    const filter = foldFilter(query.filter);
    const inRange = list.filter((message) => message.seq > after && message.seq < before);
    if (query.oldestFirst !== true) inRange.reverse();
    const ids: string[] = [];
    for (const message of inRange) {
      if (ids.length >= limit) break;
      if (matchesFilter(message.keys, filter)) ids.push(message.id);
    }
    return { ids, beforeFound: true, ...afterFound };
  }

  trimMessages(inboxId: string, keep: number, maxDeleted: number): Promise<number> {
    return this.op(() => {
      const list = this.byInbox.get(inboxId) ?? [];
      const newestFirst = [...list].reverse();
      const doomed = newestFirst.slice(Math.max(0, Math.floor(keep)), Math.max(0, Math.floor(keep)) + Math.max(0, Math.floor(maxDeleted)));
      if (doomed.length === 0) return 0;
      const gone = new Set(doomed.map((m) => m.id));
      const kept = list.filter((m) => !gone.has(m.id));
      if (kept.length > 0) this.byInbox.set(inboxId, kept);
      else this.byInbox.delete(inboxId);
      for (const message of doomed) {
        this.messages.delete(message.id);
        this.addUsage(inboxId, -1, -this.content(message).size);
        this.releaseContent(message.contentId);
      }
      return doomed.length;
    });
  }

  findMessage(messageId: string): Promise<MessageDetail | null> {
    return this.op(() => {
      const message = this.messages.get(messageId);
      if (message === undefined) return null;
      const content = this.content(message);
      return {
        ...this.view(message),
        envelopeFrom: content.envelopeFrom,
        headers: content.headers.map(({ name, value }) => ({ name, value })),
      };
    });
  }

  findRawMessage(messageId: string): Promise<{ inboxId: string; raw: Uint8Array } | null> {
    return this.op(() => {
      const message = this.messages.get(messageId);
      if (message === undefined) return null;
      return { inboxId: message.inboxId, raw: new Uint8Array(this.content(message).raw) };
    });
  }

  findAttachment(messageId: string, attachmentId: string): Promise<AttachmentContent | null> {
    return this.op(() => {
      const message = this.messages.get(messageId);
      if (message === undefined) return null;
      const attachment = this.content(message).attachments.find((a) => a.id === attachmentId);
      if (attachment === undefined) return null;
      return {
        id: attachment.id,
        filename: attachment.filename,
        contentType: attachment.contentType,
        size: attachment.size,
        messageId: message.id,
        inboxId: message.inboxId,
        content: new Uint8Array(attachment.content),
      };
    });
  }

  deleteMessage(messageId: string): Promise<boolean> {
    return this.op(() => {
      const message = this.messages.get(messageId);
      if (message === undefined) return false;
      this.messages.delete(messageId);
      const list = this.byInbox.get(message.inboxId)?.filter((m) => m.id !== messageId) ?? [];
      if (list.length > 0) this.byInbox.set(message.inboxId, list);
      else this.byInbox.delete(message.inboxId);
      this.addUsage(message.inboxId, -1, -this.content(message).size);
      this.releaseContent(message.contentId);
      return true;
    });
  }

  // --- expiry -----------------------------------------------------------------------------

  deleteExpired(now: Date, limit: number): Promise<SweepCounts> {
    return this.op(() => {
      const at = now.getTime();
      const batch = Math.max(0, Math.floor(limit));
      const inboxes = [...this.inboxes.values()]
        .filter((i) => i.expiresAt.getTime() <= at)
        .sort((a, b) => a.expiresAt.getTime() - b.expiresAt.getTime())
        .slice(0, batch);
      let messages = 0;
      for (const inbox of inboxes) messages += this.removeInbox(inbox.id);
      const sessions = [...this.sessions.values()]
        .filter((s) => s.expiresAt.getTime() <= at)
        .sort((a, b) => a.expiresAt.getTime() - b.expiresAt.getTime())
        .slice(0, batch);
      for (const session of sessions) {
        this.sessions.delete(session.id);
        this.sessionByToken.delete(session.tokenHash);
      }
      return { inboxes: inboxes.length, messages, sessions: sessions.length };
    });
  }

  // --- internals --------------------------------------------------------------------------

  /** Runs an operation like a backend call: async, and refused once the store is closed. */
  private op<T>(work: () => T): Promise<T> {
    if (this.closed) return Promise.reject(new StoreUnavailableError('the store is closed'));
    try {
      return Promise.resolve(work());
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private findByUsername(username: string): Inbox | undefined {
    return this.inboxes.get(this.inboxByUsername.get(username) ?? '');
  }

  private sessionsOf(licenseId: string, at: number): number {
    return [...this.sessions.values()].filter((s) => s.licenseId === licenseId && s.expiresAt.getTime() > at).length;
  }

  /** Active inboxes the owner may read, newest first. */
  private activeInboxesOfOwner(owner: Owner, at: number): Inbox[] {
    return [...this.inboxes.values()]
      .filter(
        (i) => (i.sessionId === owner.sessionId || (owner.licenseId !== null && i.licenseId === owner.licenseId)) && i.expiresAt.getTime() > at,
      )
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || compareIds(b.id, a.id));
  }

  /** The stored usage of an inbox, as a copy (the SQL store reads its inbox row's counters). */
  private usageOf(inboxId: string): InboxUsage {
    const usage = this.usage.get(inboxId);
    return usage === undefined ? { messages: 0, bytes: 0 } : { ...usage };
  }

  /** Moves an inbox's counters with a copy stored (+1, +size) or deleted (-1, -size). */
  private addUsage(inboxId: string, messages: number, bytes: number): void {
    const usage = this.usage.get(inboxId) ?? { messages: 0, bytes: 0 };
    usage.messages += messages;
    usage.bytes += bytes;
    this.usage.set(inboxId, usage);
  }

  private activeInboxesOf(licenseId: string, at: number): number {
    return [...this.inboxes.values()].filter((i) => i.licenseId === licenseId && i.expiresAt.getTime() > at).length;
  }

  /** Deletes an inbox, its copies and the contents nobody else holds; returns the copies deleted. */
  private removeInbox(inboxId: string): number {
    const list = this.byInbox.get(inboxId) ?? [];
    this.byInbox.delete(inboxId);
    // The counters go with the inbox, like the SQL row; so do its webhook and what it owes.
    this.usage.delete(inboxId);
    this.webhooks.dropInbox(inboxId);
    for (const message of list) {
      this.messages.delete(message.id);
      this.releaseContent(message.contentId);
    }
    const inbox = this.inboxes.get(inboxId);
    if (inbox !== undefined) this.inboxByUsername.delete(inbox.username);
    this.inboxes.delete(inboxId);
    return list.length;
  }

  /** One copy fewer; the content and its attachments go with the last copy. */
  private releaseContent(contentId: string): void {
    const content = this.contents.get(contentId);
    if (content === undefined) return;
    content.copies -= 1;
    if (content.copies <= 0) this.contents.delete(contentId);
  }

  private content(message: StoredMessage): StoredContent {
    const content = this.contents.get(message.contentId);
    // Unreachable while the invariants hold (a copy never outlives its content).
    if (content === undefined) throw new Error(`content ${message.contentId} of message ${message.id} is missing`);
    return content;
  }

  private view(message: StoredMessage): MessageView {
    const content = this.content(message);
    const inbox = this.inboxes.get(message.inboxId);
    return {
      id: message.id,
      inboxId: message.inboxId,
      from: content.from !== '' ? content.from : content.envelopeFrom,
      to: content.to !== '' || inbox === undefined ? content.to : `${inbox.username}@${inbox.domain}`,
      recipient: message.recipient !== '' || inbox === undefined ? message.recipient : `${inbox.username}@${inbox.domain}`,
      subject: content.subject,
      text: content.text,
      html: content.html,
      receivedAt: new Date(message.receivedAt),
      size: content.size,
      attachments: content.attachments.map(({ id, filename, contentType, size }) => ({ id, filename, contentType, size })),
      truncated: false,
      // A copy per read, as the SQL store parses its JSON per read: callers cannot change what is stored.
      ...structuredClone(content.insights),
    };
  }

  /** view() with text and html cut to `maxFieldBytes` of UTF-8, as the SQL store cuts them. */
  private cutView(message: StoredMessage, maxFieldBytes: number): MessageView {
    const whole = this.view(message);
    const text = cutText(whole.text, maxFieldBytes);
    const html = whole.html === null ? null : cutText(whole.html, maxFieldBytes);
    return { ...whole, text: text.text, html: html?.text ?? null, truncated: text.truncated || html?.truncated === true };
  }
}

/** The filters of a listing as the SQL store applies them: each folded filter a substring of its key, ANDed. */
function matchesFilter(keys: FoldedFilter, filter: FoldedFilter): boolean {
  return keys.to.includes(filter.to) && keys.from.includes(filter.from) && keys.subject.includes(filter.subject);
}

/** Byte-order comparison of ids, like SQLite's BINARY collation (ids are ASCII). */
function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
