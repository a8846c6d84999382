import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { newId } from '../../src/domain/ids.js';
import type { MessageLink, SenderAuth } from '../../src/domain/sender-auth.js';
import type { Inbox, License, MailHeader, NewMessage, ParsedAttachment, Session } from '../../src/domain/types.js';
import type { InsertOutcome, MailStore, StorePolicy } from '../../src/ports/mail-store.js';

/** Gives a contract test the store of the current test (made fresh by the suite's beforeEach). */
export type StoreGetter = () => MailStore;

/** A fixed origin for test time: tests move time by building Dates, never by sleeping. */
export const T0 = Date.UTC(2030, 0, 1);

/** `minutes` after T0 (negative: before). */
export function at(minutes: number): Date {
  return new Date(T0 + minutes * 60_000);
}

/** A random valid username, so tests never collide with each other's names. */
export function username(prefix = 'u'): string {
  return `${prefix}${randomBytes(6).toString('hex')}`;
}

/** A session valid for a day from T0. */
export function makeSession(overrides: Partial<Session> = {}): Session {
  return { id: newId(), tokenHash: randomBytes(32).toString('hex'), createdAt: at(0), expiresAt: at(24 * 60), licenseId: null, ...overrides };
}

/** A license valid for a year from T0. */
export function makeLicense(overrides: Partial<License> = {}): License {
  return {
    id: newId(),
    keyHash: randomBytes(32).toString('hex'),
    createdAt: at(0),
    validUntil: at(365 * 24 * 60),
    maxSessions: 5,
    revokedAt: null,
    ...overrides,
  };
}

/** A free inbox living 30 minutes from T0. */
export function makeInbox(overrides: Partial<Inbox> = {}): Inbox {
  return {
    id: newId(),
    username: username(),
    domain: 'tempinbox.test',
    createdAt: at(0),
    expiresAt: at(30),
    sessionId: null,
    licenseId: null,
    ...overrides,
  };
}

/** What a test may vary in a message; everything else has a plain default. */
export interface MailOverrides {
  envelopeFrom?: string;
  from?: string;
  to?: string;
  subject?: string;
  text?: string;
  html?: string | null;
  headers?: MailHeader[];
  messageId?: string | null;
  attachments?: ParsedAttachment[];
  codes?: string[];
  links?: MessageLink[];
  auth?: SenderAuth | null;
  raw?: Uint8Array;
  receivedAt?: Date;
}

/** A parsed message ready for insertMessage. */
export function makeMail(overrides: MailOverrides = {}): NewMessage {
  const subject = overrides.subject ?? 'Hello';
  const raw = overrides.raw ?? new TextEncoder().encode(`From: a@example.org\r\nSubject: ${subject}\r\n\r\nbody\r\n`);
  return {
    envelopeFrom: overrides.envelopeFrom ?? 'bounce@example.org',
    receivedAt: overrides.receivedAt ?? at(1),
    raw,
    parsed: {
      from: overrides.from ?? 'Alice <alice@example.org>',
      to: overrides.to ?? 'someone@tempinbox.test',
      subject,
      text: overrides.text ?? 'body',
      html: overrides.html === undefined ? '<p>body</p>' : overrides.html,
      headers: overrides.headers ?? [{ name: 'subject', value: subject }],
      messageId: overrides.messageId === undefined ? '<1@example.org>' : overrides.messageId,
      attachments: overrides.attachments ?? [],
      codes: overrides.codes ?? [],
      links: overrides.links ?? [],
    },
    auth: overrides.auth,
  };
}

/** An attachment with the given bytes. */
export function makeAttachment(content: Uint8Array, filename = 'file.bin', contentType = 'application/octet-stream'): ParsedAttachment {
  return { filename, contentType, content, contentId: null, inline: false };
}

/**
 * A raw multipart message and its attachments as the parser gives them: every byte value in
 * base64 and `héllo` as 8bit, each with the range of `raw` it decodes from, then three bytes
 * kept whole.
 */
export function rangedAttachments(): { raw: Uint8Array; attachments: ParsedAttachment[]; file: Uint8Array } {
  const file = allByteValues();
  const encoded = Buffer.from(file).toString('base64');
  const head = 'Content-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\nContent-Transfer-Encoding: base64\r\n\r\n';
  const middle = '\r\n--b\r\nContent-Transfer-Encoding: 8bit\r\n\r\n';
  const base64Body = `${encoded.slice(0, 76)}\r\n${encoded.slice(76)}`;
  const raw = new Uint8Array(Buffer.concat([head, base64Body, middle, 'héllo', '\r\n--b--\r\n'].map((part) => Buffer.from(part, 'utf8'))));
  const base64End = head.length + base64Body.length;
  const plainStart = base64End + middle.length;
  return {
    raw,
    file,
    attachments: [
      { ...makeAttachment(file, 'f.bin'), rawRange: { start: head.length, end: base64End, encoding: 'base64' } },
      { ...makeAttachment(new TextEncoder().encode('héllo'), 'h.txt', 'text/plain'), rawRange: { start: plainStart, end: plainStart + Buffer.byteLength('héllo'), encoding: 'identity' } },
      makeAttachment(new Uint8Array([1, 2, 3]), 'whole.bin'),
    ],
  };
}

/** Every byte value 0..255, twice: the bytes most likely to be mangled by text handling. */
export function allByteValues(): Uint8Array {
  const out = new Uint8Array(512);
  for (let i = 0; i < out.length; i += 1) out[i] = i % 256;
  return out;
}

/** `size` random bytes in a plain Uint8Array. */
export function randomContent(size: number): Uint8Array {
  return new Uint8Array(randomBytes(size));
}

/** Asserts byte-exact equality, and that the store hands out plain Uint8Arrays. */
export function expectBytes(actual: Uint8Array | undefined, expected: Uint8Array): void {
  expect(actual).toBeInstanceOf(Uint8Array);
  if (actual === undefined) return;
  expect(actual.byteLength).toBe(expected.byteLength);
  expect(Buffer.from(actual.buffer, actual.byteOffset, actual.byteLength).equals(Buffer.from(expected))).toBe(true);
}

/** Inserts an inbox and fails the test unless it was created. */
export async function addInbox(store: MailStore, overrides: Partial<Inbox> = {}, now = at(0)): Promise<Inbox> {
  const inbox = makeInbox(overrides);
  expect(await store.insertInbox(inbox, now)).toBe('created');
  return inbox;
}

/** Quotas no test reaches unless it means to. */
const UNREACHED = { maxMessages: 1_000_000, maxBytes: 1024 ** 4 };

/** A store policy at `now` (default: when makeMail's messages arrive) with quotas that are never reached. */
export function openPolicy(now = at(1), overrides: Partial<StorePolicy> = {}): StorePolicy {
  return { now, free: UNREACHED, premium: UNREACHED, ...overrides };
}

/** The message id per inbox that got the message (the refused ones left out). */
export function storedIds(outcomes: Map<string, InsertOutcome>): Map<string, string> {
  const ids = new Map<string, string>();
  for (const [inboxId, outcome] of outcomes) if (outcome.status === 'stored') ids.set(inboxId, outcome.messageId);
  return ids;
}

/**
 * Store time of the fixtures that set up state: before every inbox a test makes expires, so
 * a test may give a message to an inbox it then lets expire (limits-contract tests store time).
 */
export const SETUP_TIME = new Date(0);

/** Delivers a message to the inboxes (no quota, at SETUP_TIME) and returns the new message id per inbox. */
export async function deliver(store: MailStore, inboxIds: string[], overrides: MailOverrides = {}): Promise<Map<string, string>> {
  return storedIds(await store.insertMessage(makeMail(overrides), inboxIds, openPolicy(SETUP_TIME)));
}

/** Delivers to one inbox and returns the message id. */
export async function deliverOne(store: MailStore, inboxId: string, overrides: MailOverrides = {}): Promise<string> {
  const ids = await deliver(store, [inboxId], overrides);
  const id = ids.get(inboxId);
  expect(id).toBeTypeOf('string');
  return id ?? '';
}
