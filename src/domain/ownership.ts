import type { Inbox, Owner, Session } from './types.js';

/** The owner a session acts as: itself, and the license it redeemed (if any). */
export function ownerOf(session: Session): Owner {
  return { sessionId: session.id, licenseId: session.licenseId };
}

/**
 * True when the session may read the inbox: it created it, or the inbox belongs to the
 * license the session redeemed (every session that redeemed a key sees its inboxes).
 */
export function owns(session: Session, inbox: Inbox): boolean {
  if (inbox.sessionId !== null && inbox.sessionId === session.id) return true;
  return inbox.licenseId !== null && inbox.licenseId === session.licenseId;
}
