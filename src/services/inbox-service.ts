import { splitInboxParam } from '../domain/address.js';
import type { Clock } from '../domain/clock.js';
import { checkEtag } from '../domain/check-etag.js';
import { CHECK_MAX_LIMIT } from '../domain/check-limits.js';
import { AppError } from '../domain/errors.js';
import { CREATE_PER_ADDRESS, CREATE_PER_SESSION } from '../domain/fair-use.js';
import { isId, newId } from '../domain/ids.js';
import { hasControlCharacter } from '../domain/match-key.js';
import { inboxExpiry, isInboxActive, isLicenseActive, planLimits, type PlanLimits, type PlanSettings } from '../domain/plan.js';
import type { Inbox, InboxWithCount, Session } from '../domain/types.js';
import { generateUsername, isReservedUsername, isValidUsername, normalizeUsername } from '../domain/username.js';
import type { InboxEvents } from '../ports/inbox-events.js';
import { hasFilter, type InboxMark, type InboxPoll, type MessageReads, type PageListing } from '../ports/message-reads.js';
import type { InboxStore } from '../ports/inbox-store.js';
import type { SessionStore } from '../ports/session-store.js';
import { readCheck, type CheckPage, type CheckRequest } from './check-page.js';
import type { FairUseService } from './fair-use-service.js';
import { ownerOf, owns } from '../domain/ownership.js';

/** Tries at a fresh generated name before giving up (2^51 names make one retry already rare). */
const GENERATED_NAME_ATTEMPTS = 5;

/** What create answers: the inbox and whether it already existed. */
export interface CreateResult {
  inbox: Inbox;
  reused: boolean;
}

/** A check answer and its ETag; `page` null: the client's copy is current (304). */
export interface CheckAnswer<T> {
  etag: string;
  page: CheckPage<T> | null;
}

/**
 * A check's reads (InboxService.readPoll): the caller's session, and what the store read of
 * the inbox for it, at `now`. check answers from it once the caller is admitted.
 */
export interface PolledInbox extends InboxPoll {
  /** The instant the session and the inbox were judged at. */
  now: Date;
}

/** The session as GET /api/session reports it. */
export interface SessionOverview {
  premium: boolean;
  premiumUntil: Date | null;
  limits: PlanLimits;
  inboxes: InboxWithCount[];
}

/** Dependencies of the inbox use cases. */
export interface InboxServiceDeps {
  store: SessionStore & InboxStore & MessageReads;
  clock: Clock;
  fairUse: FairUseService;
  domains: readonly string[];
  plan: PlanSettings;
  /** Told when an inbox is discarded, so that its held requests end (optional in unit tests). */
  events?: InboxEvents;
}

/** Refuses a check whose ids are not shaped like ids, whose limit is out of range or whose filter has a control character (invalid_request). */
export function assertCheckRequest(request: CheckRequest): void {
  const problem = checkRequestProblem(request);
  if (problem !== null) throw new AppError('invalid_request', problem);
}

/** What assertCheckRequest refuses a check for, or null when it is well formed. */
function checkRequestProblem(request: CheckRequest): string | null {
  if (request.sinceId !== undefined && !isId(request.sinceId)) return 'since must be a message id.';
  if (request.beforeId !== undefined && !isId(request.beforeId)) return 'before must be a message id.';
  if (!Number.isInteger(request.limit) || request.limit < 1 || request.limit > CHECK_MAX_LIMIT) {
    return `limit must be an integer from 1 to ${CHECK_MAX_LIMIT}.`;
  }
  const filter = request.filter ?? {};
  for (const name of ['to', 'from', 'subject'] as const) {
    const value = filter[name];
    if (value !== undefined && hasControlCharacter(value)) return `${name} must not contain control characters.`;
  }
  return null;
}

/** Creating, reusing, reading and discarding inboxes on behalf of a session. */
export class InboxService {
  constructor(private readonly deps: InboxServiceDeps) {}

  /** GET /api/create: the free/premium rules of docs/api.md. `clientAddress` keys fair use. */
  async create(session: Session, request: { username?: string; domain?: string }, clientAddress: string): Promise<CreateResult> {
    const { store, clock } = this.deps;
    const now = clock.now();
    const domain = this.pickDomain(request.domain);
    const license = session.licenseId === null ? null : await store.findLicenseById(session.licenseId);
    const premium = isLicenseActive(license, now);

    if (request.username !== undefined) {
      if (!premium) throw new AppError('premium_required');
      const username = normalizeUsername(request.username);
      if (!isValidUsername(username)) throw new AppError('username_invalid');
      if (isReservedUsername(username)) throw new AppError('username_taken');
      const existing = await store.findInboxByUsername(username);
      if (existing !== null && owns(session, existing) && isInboxActive(existing.expiresAt, now)) {
        return { inbox: existing, reused: true };
      }
      await this.refuseAtLimit(session, license.id, now);
      await this.countCreation(session, clientAddress);
      const inbox = { ...this.newInbox(session, username, domain, now, license.id), licenseId: license.id };
      const result = await store.insertLicenseInbox(inbox, now, this.deps.plan.premiumMaxInboxes);
      if (result === 'limit_reached') throw new AppError('inbox_limit_reached');
      if (result === 'taken') throw new AppError('username_taken');
      return { inbox, reused: false };
    }

    if (premium) {
      await this.refuseAtLimit(session, license.id, now);
      await this.countCreation(session, clientAddress);
      return { inbox: await this.insertGeneratedPremium(session, domain, now, license.id), reused: false };
    }
    // Cheap answer for the common case (the inbox exists) before the fair-use budget is
    // counted; the store decides for real in getOrCreateFreeInbox.
    const [current] = await store.listActiveInboxes(ownerOf(session), now);
    if (current !== undefined) return { inbox: current, reused: true };
    await this.countCreation(session, clientAddress);
    return this.getOrCreateFree(session, domain, now);
  }

  /**
   * Whether createWithSession serves this create: a generated name on a known domain (the
   * common case). Otherwise the session is stored first and create() decides, refusals included.
   */
  createsWithSession(request: { username?: string; domain?: string }): boolean {
    return request.username === undefined && (request.domain === undefined || this.deps.domains.includes(request.domain.trim().toLowerCase()));
  }

  /**
   * GET /api/create for a caller without a session: the new `session` (not stored yet) and its
   * free inbox, stored in one transaction (insertSessionWithInbox). Only for requests
   * createsWithSession accepts.
   */
  async createWithSession(session: Session, request: { domain?: string }, clientAddress: string): Promise<CreateResult> {
    const now = this.deps.clock.now();
    const domain = this.pickDomain(request.domain);
    await this.countCreation(session, clientAddress);
    return this.withGeneratedName(async (username) => {
      const inbox = this.newInbox(session, username, domain, now, null);
      return (await this.deps.store.insertSessionWithInbox(session, inbox, now)) === 'created' ? { inbox, reused: false } : undefined;
    });
  }

  /**
   * GET /api/check/<username>, first step: the session of the cookie's hash and, for it, the
   * inbox's mark (and, when `readIds`, the first page of ids) in one store operation
   * (MessageReads.pollInbox; docs/architecture.md "One statement per poll"). No error is
   * thrown here: the caller answers session_required for a null session, renews it and counts
   * the poll budget, then check judges the request and the inbox, so errors come in the order
   * of docs/api.md whatever the store read at once. `readIds`: the client has no ETag to
   * offer, so a 304 is unlikely and the ids will be wanted.
   */
  async readPoll(tokenHash: string | null, usernameOrAddress: string, request: CheckRequest, readIds: boolean): Promise<PolledInbox> {
    const now = this.deps.clock.now();
    if (tokenHash === null) return { session: null, inbox: null, mark: null, ids: null, now };
    const { username } = splitInboxParam(usernameOrAddress);
    // A request check will refuse reads the session alone.
    const wellFormed = checkRequestProblem(request) === null && isValidUsername(username);
    const firstPage = request.beforeId === undefined && !hasFilter(request.filter);
    const poll = await this.deps.store.pollInbox({
      tokenHash,
      username: wellFormed ? username : '',
      now,
      sinceId: wellFormed ? request.sinceId : undefined,
      // One more than wanted: it tells whether older messages exist beyond the limit.
      idLimit: wellFormed && readIds && firstPage ? request.limit + 1 : 0,
    });
    return { ...poll, now };
  }

  /**
   * The polled inbox, once the request and the inbox pass check's rules: invalid_request,
   * username_invalid, inbox_not_found (missing, foreign, another domain), inbox_expired.
   */
  checkedInbox(polled: PolledInbox, usernameOrAddress: string, request: CheckRequest): { inbox: Inbox; mark: InboxMark } {
    assertCheckRequest(request);
    const inbox = ownInbox(polled.inbox, usernameOrAddress);
    if (!isInboxActive(inbox.expiresAt, polled.now) || polled.mark === null) throw new AppError('inbox_expired');
    return { inbox, mark: polled.mark };
  }

  /**
   * GET /api/check/<username> for an admitted session: one bounded page (readCheck) in the
   * transport's items and its ETag (checkEtag), or no page when `isCurrent(etag)` says the
   * client already has it (304). Same errors as checkedInbox. The ETag and the `since`
   * shortcut come from the mark read with the session; a `since` check that finds nothing
   * new, and a 304, read no message. A held check's every read is this one too
   * (LiveMailService.check).
   */
  async check<T>(
    polled: PolledInbox,
    usernameOrAddress: string,
    request: CheckRequest,
    listing: PageListing<T>,
    isCurrent: (etag: string) => boolean = () => false,
  ): Promise<CheckAnswer<T>> {
    const { inbox, mark } = this.checkedInbox(polled, usernameOrAddress, request);
    // The mark is read before the messages: a change in between makes the tag older than the
    // answer (the next check gets a 200 it did not need), never newer (a 304 for an answer not seen).
    const etag = checkEtag({ ...request, inboxId: inbox.id, version: mark.version });
    if (isCurrent(etag)) return { etag, page: null };
    if (request.beforeId === undefined && (mark.count === 0 || mark.nothingSince)) return { etag, page: { messages: [], hasMore: false } };
    return { etag, page: await readCheck(this.deps.store, inbox.id, request, listing, { ids: polled.ids ?? undefined }) };
  }

  /** DELETE /api/inbox/<username>: discards the inbox and its messages (expired ones too). */
  async discard(session: Session, usernameOrAddress: string): Promise<void> {
    const inbox = await this.findOwn(session, usernameOrAddress);
    await this.deps.store.deleteInbox(inbox.id);
    this.deps.events?.publish({ type: 'access', inboxId: inbox.id });
  }

  /** GET /api/session: mode, limits and active inboxes. */
  async overview(session: Session): Promise<SessionOverview> {
    const { store, clock, plan } = this.deps;
    const now = clock.now();
    const license = session.licenseId === null ? null : await store.findLicenseById(session.licenseId);
    const premium = isLicenseActive(license, now);
    return {
      premium,
      premiumUntil: premium ? license.validUntil : null,
      limits: planLimits(plan, premium),
      inboxes: await store.listActiveInboxes(ownerOf(session), now),
    };
  }

  /** The session's inbox by username or address, active; 404 for foreign, 410 for expired. */
  async findOwnActive(session: Session, usernameOrAddress: string): Promise<Inbox> {
    const inbox = await this.findOwn(session, usernameOrAddress);
    if (!isInboxActive(inbox.expiresAt, this.deps.clock.now())) throw new AppError('inbox_expired');
    return inbox;
  }

  /** The session's inbox (active or expired-not-yet-swept); a foreign one is reported missing. */
  async findOwn(session: Session, usernameOrAddress: string): Promise<Inbox> {
    const { username } = splitInboxParam(usernameOrAddress);
    if (!isValidUsername(username)) throw new AppError('username_invalid');
    const inbox = await this.deps.store.findInboxByUsername(username);
    return ownInbox(inbox !== null && owns(session, inbox) ? inbox : null, usernameOrAddress);
  }

  private pickDomain(requested: string | undefined): string {
    const { domains } = this.deps;
    if (requested === undefined) return domains[0] ?? 'localhost';
    const domain = requested.trim().toLowerCase();
    if (!domains.includes(domain)) throw new AppError('invalid_domain');
    return domain;
  }

  /**
   * A create at the license's maximum is refused before the creation budget is counted. Only
   * a fast path: the store decides for real in insertLicenseInbox, atomically.
   */
  private async refuseAtLimit(session: Session, licenseId: string, now: Date): Promise<void> {
    const readable = await this.deps.store.listActiveInboxes(ownerOf(session), now);
    const active = readable.filter((inbox) => inbox.licenseId === licenseId).length;
    if (active >= this.deps.plan.premiumMaxInboxes) throw new AppError('inbox_limit_reached');
  }

  private async countCreation(session: Session, clientAddress: string): Promise<void> {
    await this.deps.fairUse.consume([
      [CREATE_PER_ADDRESS, clientAddress],
      [CREATE_PER_SESSION, session.id],
    ]);
  }

  private newInbox(session: Session, username: string, domain: string, now: Date, licenseId: string | null): Inbox {
    return {
      id: newId(),
      username,
      domain,
      createdAt: now,
      expiresAt: inboxExpiry(this.deps.plan, now, licenseId !== null),
      sessionId: session.id,
      licenseId,
    };
  }

  /** A new generated-name inbox of the license, unless it already has its maximum (one store transaction each try). */
  private insertGeneratedPremium(session: Session, domain: string, now: Date, licenseId: string): Promise<Inbox> {
    return this.withGeneratedName(async (username) => {
      const inbox = { ...this.newInbox(session, username, domain, now, licenseId), licenseId };
      const result = await this.deps.store.insertLicenseInbox(inbox, now, this.deps.plan.premiumMaxInboxes);
      if (result === 'limit_reached') throw new AppError('inbox_limit_reached');
      return result === 'created' ? inbox : undefined;
    });
  }

  /**
   * The free session's one inbox: the store returns the one it has or inserts the new one in
   * one transaction, so concurrent creates of one session all answer the same inbox.
   */
  private getOrCreateFree(session: Session, domain: string, now: Date): Promise<CreateResult> {
    return this.withGeneratedName(async (username) => {
      const result = await this.deps.store.getOrCreateFreeInbox(this.newInbox(session, username, domain, now, null), ownerOf(session), now);
      return result.status === 'taken' ? undefined : { inbox: result.inbox, reused: result.status === 'existing' };
    });
  }

  /** The first result `attempt` gives for a fresh generated name (undefined: the name was taken), GENERATED_NAME_ATTEMPTS tries. */
  private async withGeneratedName<T>(attempt: (username: string) => Promise<T | undefined>): Promise<T> {
    for (let tries = 0; tries < GENERATED_NAME_ATTEMPTS; tries += 1) {
      const username = generateUsername();
      if (isReservedUsername(username)) continue;
      const result = await attempt(username);
      if (result !== undefined) return result;
    }
    throw new AppError('internal_error', 'Could not find a free generated username.');
  }
}

/**
 * `inbox`, read for the session by `usernameOrAddress` (null: none the session may read), as
 * findOwn answers: username_invalid for a malformed name, inbox_not_found for a missing or
 * foreign inbox or another domain's address.
 */
function ownInbox(inbox: Inbox | null, usernameOrAddress: string): Inbox {
  const { username, domain } = splitInboxParam(usernameOrAddress);
  if (!isValidUsername(username)) throw new AppError('username_invalid');
  // One answer for missing and foreign inboxes: nobody can probe which names exist.
  if (inbox === null || (domain !== null && domain !== inbox.domain)) throw new AppError('inbox_not_found');
  return inbox;
}
