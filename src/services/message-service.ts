import type { Clock } from '../domain/clock.js';
import { AppError } from '../domain/errors.js';
import { isId } from '../domain/ids.js';
import { isInboxActive } from '../domain/plan.js';
import type { AttachmentContent, Inbox, MessageDetail, Session } from '../domain/types.js';
import type { InboxEvents } from '../ports/inbox-events.js';
import type { InboxStore } from '../ports/inbox-store.js';
import type { MessageReads } from '../ports/message-reads.js';
import type { MessageWrites } from '../ports/message-writes.js';
import { owns } from '../domain/ownership.js';

/** The not_found sentence for a message that is missing or not the session's. */
const NO_SUCH_MESSAGE = 'No such message.';
/** The not_found sentence of the attachment route, whatever was missing or foreign. */
const NO_SUCH_ATTACHMENT = 'No such message or attachment.';

/** Reading and deleting single messages; every call proves the session owns the inbox. */
export class MessageService {
  constructor(
    private readonly store: Pick<InboxStore, 'findInboxById'> & MessageReads & Pick<MessageWrites, 'deleteMessage'>,
    private readonly clock: Clock,
    /** Told of each deletion after its commit (event streams send `deleted`). */
    private readonly events?: InboxEvents,
  ) {}

  /** One message with headers. */
  async get(session: Session, messageId: string): Promise<MessageDetail> {
    const message = isId(messageId) ? await this.store.findMessage(messageId) : null;
    if (message === null) throw new AppError('not_found', NO_SUCH_MESSAGE);
    await this.assertReadable(session, message.inboxId);
    return message;
  }

  /** The original bytes as received. */
  async raw(session: Session, messageId: string): Promise<Uint8Array> {
    const found = isId(messageId) ? await this.store.findRawMessage(messageId) : null;
    if (found === null) throw new AppError('not_found', NO_SUCH_MESSAGE);
    await this.assertReadable(session, found.inboxId);
    return found.raw;
  }

  /** One attachment's bytes and metadata. */
  async attachment(session: Session, messageId: string, attachmentId: string): Promise<AttachmentContent> {
    const found = isId(messageId) && isId(attachmentId) ? await this.store.findAttachment(messageId, attachmentId) : null;
    // One answer for a missing message, a foreign one and a missing attachment: the reply
    // tells nothing about messages of other sessions (docs/api.md, attachments).
    if (found === null) throw new AppError('not_found', NO_SUCH_ATTACHMENT);
    await this.assertReadable(session, found.inboxId, NO_SUCH_ATTACHMENT);
    return found;
  }

  /** Deletes one message of an inbox the session owns (expired ones too). */
  async delete(session: Session, messageId: string): Promise<void> {
    const message = isId(messageId) ? await this.store.findMessage(messageId) : null;
    if (message === null) throw new AppError('not_found', NO_SUCH_MESSAGE);
    await this.assertOwned(session, message.inboxId);
    if (await this.store.deleteMessage(messageId)) this.events?.publish({ type: 'deleted', inboxId: message.inboxId, messageId });
  }

  /** A foreign message answers exactly like a missing one. Returns the inbox. */
  private async assertOwned(session: Session, inboxId: string, notFound = NO_SUCH_MESSAGE): Promise<Inbox> {
    const inbox = await this.store.findInboxById(inboxId);
    if (inbox === null || !owns(session, inbox)) throw new AppError('not_found', notFound);
    return inbox;
  }

  /** Owned, and the inbox still active (410 once it expired, until the sweeper deletes it). */
  private async assertReadable(session: Session, inboxId: string, notFound = NO_SUCH_MESSAGE): Promise<void> {
    const inbox = await this.assertOwned(session, inboxId, notFound);
    if (!isInboxActive(inbox.expiresAt, this.clock.now())) throw new AppError('inbox_expired');
  }
}
