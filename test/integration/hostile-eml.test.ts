import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ParsedMail } from '../../src/domain/types.js';
import { DEFAULT_MAIL_LIMITS } from '../../src/mail/mail-limits.js';
import { parseMail } from '../../src/mail/parse-mail.js';
import { MAX_FILENAME_CHARS } from '../../src/mail/safe-filename.js';
import { largeFixtures } from '../fixtures/eml/generate-large-fixtures.js';

/**
 * Every file in test/fixtures/eml is parsed; none may throw, stall, or let anything
 * dangerous through, and each meets its golden expectations in expected.json. A new
 * fixture (e.g. a regression named after its issue) needs an entry there.
 */

const FIXTURES = new URL('../fixtures/eml/', import.meta.url);
const CONTEXT = { envelopeFrom: 'sender@example.net', recipient: 'victim@tempinbox.test' };

/** Generous for CI machines; the whole corpus parses in well under a second locally. */
const MAX_PARSE_MS = 5000;

/** Fixtures are committed; keep each small enough to read in a diff tool. */
const MAX_FIXTURE_BYTES = 300 * 1024;

interface AttachmentExpectation {
  filename: string;
  contentType?: string;
  inline?: boolean;
  contentId?: string | null;
  size?: number;
  sha256?: string;
}

interface Expectation {
  description: string;
  from?: string;
  to?: string;
  subject?: string;
  subjectIncludes?: string[];
  subjectLength?: number;
  messageId?: string | null;
  headerCount?: number;
  headerValues?: Record<string, string>;
  headerValueLengths?: Record<string, number>;
  text?: string;
  textIncludes?: string[];
  textExcludes?: string[];
  html?: null | { includes?: string[]; excludes?: string[] };
  attachmentCount?: number;
  attachments?: AttachmentExpectation[];
}

const expected = JSON.parse(readFileSync(new URL('expected.json', FIXTURES), 'utf8')) as Record<string, Expectation>;
const names = readdirSync(FIXTURES).filter((name) => name.endsWith('.eml')).sort();

function read(name: string): Uint8Array {
  return readFileSync(new URL(name, FIXTURES));
}

// eslint-disable-next-line no-control-regex -- the assertion is about control characters
const CONTROL_IN_TEXT = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;
// eslint-disable-next-line no-control-regex -- the assertion is about control characters
const CONTROL_IN_LINE = /[\u0000-\u001F\u007F-\u009F]/;

/** The properties every parse must have, whatever the input. */
function expectSafe(mail: ParsedMail): void {
  if (mail.html !== null) {
    const html = mail.html.toLowerCase();
    expect(html).not.toContain('<script');
    expect(html).not.toMatch(/\son\w+\s*=/);
    expect(html).not.toContain('javascript:');
    expect(html).not.toContain('<iframe');
    expect(html).not.toContain('<form');
    expect(html).not.toContain('<meta');
    expect(html).not.toContain('url(');
    expect(html).not.toMatch(CONTROL_IN_TEXT);
  }
  expect(mail.text).not.toMatch(CONTROL_IN_TEXT);
  for (const line of [mail.from, mail.to, mail.subject, mail.messageId ?? '']) expect(line).not.toMatch(CONTROL_IN_LINE);
  expect(mail.subject.length).toBeLessThanOrEqual(DEFAULT_MAIL_LIMITS.maxSubjectChars);
  expect(mail.headers.length).toBeLessThanOrEqual(DEFAULT_MAIL_LIMITS.maxHeaders);
  for (const header of mail.headers) {
    expect(header.name).toMatch(/^[\x21-\x39\x3b-\x7e]+$/);
    expect(header.value).not.toMatch(CONTROL_IN_LINE);
    expect(header.value.length).toBeLessThanOrEqual(DEFAULT_MAIL_LIMITS.maxHeaderValueChars);
  }
  expect(mail.attachments.length).toBeLessThanOrEqual(DEFAULT_MAIL_LIMITS.maxAttachments);
  for (const attachment of mail.attachments) {
    expect(attachment.filename).not.toBe('');
    expect(attachment.filename).not.toMatch(/[/\\]/);
    expect(attachment.filename.startsWith('.')).toBe(false);
    expect(attachment.filename).not.toContain('..');
    expect(attachment.filename).not.toMatch(CONTROL_IN_LINE);
    expect(Array.from(attachment.filename).length).toBeLessThanOrEqual(MAX_FILENAME_CHARS);
    expect(attachment.contentType).toMatch(/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/);
    expect(attachment.content).toBeInstanceOf(Uint8Array);
  }
}

function expectAttachment(actual: ParsedMail['attachments'][number] | undefined, want: AttachmentExpectation): void {
  expect(actual).toBeDefined();
  if (actual === undefined) return;
  expect(actual.filename).toBe(want.filename);
  if (want.contentType !== undefined) expect(actual.contentType).toBe(want.contentType);
  if (want.inline !== undefined) expect(actual.inline).toBe(want.inline);
  if (want.contentId !== undefined) expect(actual.contentId).toBe(want.contentId);
  if (want.size !== undefined) expect(actual.content.length).toBe(want.size);
  if (want.sha256 !== undefined) expect(createHash('sha256').update(actual.content).digest('hex')).toBe(want.sha256);
}

/** The golden expectations of one fixture. */
function expectGolden(mail: ParsedMail, want: Expectation): void {
  if (want.from !== undefined) expect(mail.from).toBe(want.from);
  if (want.to !== undefined) expect(mail.to).toBe(want.to);
  if (want.subject !== undefined) expect(mail.subject).toBe(want.subject);
  for (const part of want.subjectIncludes ?? []) expect(mail.subject).toContain(part);
  if (want.subjectLength !== undefined) expect(mail.subject.length).toBe(want.subjectLength);
  if (want.messageId !== undefined) expect(mail.messageId).toBe(want.messageId);
  if (want.headerCount !== undefined) expect(mail.headers).toHaveLength(want.headerCount);
  for (const [name, value] of Object.entries(want.headerValues ?? {})) {
    expect(mail.headers.find((header) => header.name === name)?.value).toBe(value);
  }
  for (const [name, length] of Object.entries(want.headerValueLengths ?? {})) {
    expect(mail.headers.find((header) => header.name === name)?.value.length).toBe(length);
  }
  if (want.text !== undefined) expect(mail.text).toBe(want.text);
  for (const part of want.textIncludes ?? []) expect(mail.text).toContain(part);
  for (const part of want.textExcludes ?? []) expect(mail.text).not.toContain(part);
  if (want.html === null) expect(mail.html).toBeNull();
  if (want.html !== undefined && want.html !== null) {
    expect(mail.html).not.toBeNull();
    for (const part of want.html.includes ?? []) expect(mail.html).toContain(part);
    for (const part of want.html.excludes ?? []) expect(mail.html?.toLowerCase()).not.toContain(part.toLowerCase());
  }
  if (want.attachmentCount !== undefined) expect(mail.attachments).toHaveLength(want.attachmentCount);
  if (want.attachments !== undefined) {
    expect(mail.attachments).toHaveLength(want.attachments.length);
    want.attachments.forEach((attachment, i) => expectAttachment(mail.attachments[i], attachment));
  }
}

describe('hostile .eml corpus', () => {
  it('has the fixtures the threat model asks for, each with expectations and under 300 KB', () => {
    expect(names.length).toBeGreaterThanOrEqual(30);
    expect(Object.keys(expected).sort()).toEqual(names);
    for (const name of names) expect(read(name).length, name).toBeLessThan(MAX_FIXTURE_BYTES);
  });

  it('holds the generated fixtures exactly as generate-large-fixtures.ts makes them', () => {
    for (const fixture of largeFixtures()) {
      expect(Buffer.from(read(fixture.name)).equals(Buffer.from(fixture.content)), fixture.name).toBe(true);
    }
  });

  it.each(names)('%s parses safely, quickly, and as expected', async (name) => {
    const raw = read(name);
    const started = performance.now();
    const mail = await parseMail(raw, CONTEXT);
    expect(performance.now() - started).toBeLessThan(MAX_PARSE_MS);
    expectSafe(mail);
    const want = expected[name];
    expect(want, `expected.json has no entry for ${name}`).toBeDefined();
    if (want !== undefined) expectGolden(mail, want);
  });

  it('keeps the first 100 of 150 attachments, in order', async () => {
    const mail = await parseMail(read('many-attachments.eml'), CONTEXT);
    expect(mail.attachments.map((attachment) => attachment.filename)).toEqual(
      Array.from({ length: 100 }, (_, i) => `file-${i + 1}.txt`),
    );
  });

  it('leaves Object.prototype alone', async () => {
    await parseMail(read('prototype-pollution.eml'), CONTEXT);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')).toBe(false);
  });

  it('does not depend on the buffer it was given beyond the call', async () => {
    const raw = new Uint8Array(read('inline-cid-and-pdf.eml'));
    const mail = await parseMail(raw, CONTEXT);
    const pdf = new Uint8Array(mail.attachments[1]?.content ?? []);
    raw.fill(0);
    expect(mail.attachments[1]?.content).toEqual(pdf);
  });
});
