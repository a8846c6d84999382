import type { Attachment, Email } from 'postal-mime';
import { decodeRawRange, type RawRange } from '../domain/raw-range.js';
import type { ParsedAttachment, ParsedMail } from '../domain/types.js';
import type { MailParser } from '../ports/mail-parser.js';
import { cleanLine } from './clean-text.js';
import { extractLinks } from './extract-links.js';
import { ExactPostalMime } from './exact-postal-mime.js';
import { fallbackParse, rawBodyText, startsWithHeader } from './fallback-parse.js';
import { mailBody } from './mail-body.js';
import { extractMessageCodes } from './message-codes.js';
import { structureProblem } from './input-guard.js';
import { DEFAULT_MAIL_LIMITS, type MailLimits } from './mail-limits.js';
import { readHeaders } from './read-headers.js';
import { safeFilename } from './safe-filename.js';

/** Options of createMailParser: limits to override, and where failures are reported. */
export interface MailParserOptions {
  limits?: Partial<MailLimits>;
  /** Called when the MIME parse failed and the fallback ran (for a log line or a metric). */
  onParseError?: (error: unknown) => void;
}

/** `type/subtype` as RFC 2045 §5.1 tokens: anything else is stored as octet-stream. */
const MIME_TYPE = /^[a-z0-9!#$&^_.+-]{1,127}\/[a-z0-9!#$&^_.+-]{1,127}$/;

/** RFC 5322 §3.5 line limit; a Content-ID is one token. */
const MAX_CONTENT_ID_CHARS = 998;

/** How far into the message the first line is inspected to tell headers from body text. */
const FIRST_LINE_PROBE_BYTES = 1024;

const UTF8_BOM = [0xef, 0xbb, 0xbf];
const CRLF = [0x0d, 0x0a];

const EMPTY_MAIL: ParsedMail = Object.freeze({
  from: '', to: '', subject: '', text: '', html: null, headers: [], messageId: null, attachments: [], codes: [], links: [],
});

/**
 * What postal-mime reads. A leading BOM is dropped (some clients write one, and it would
 * hide the first header); a message that does not start with a header line (RFC 5322
 * allows no headers, junk does not have any) gets an empty header section in front, so all
 * of it is read as a text body instead of as nonsense headers. `at` is where the bytes read
 * begin in `raw` (negative when a line break was put in front), so that a position in what
 * the parser read is `at` away from the same byte of `raw`.
 */
function prepareInput(raw: Uint8Array): { bytes: Uint8Array; at: number } {
  const bom = UTF8_BOM.every((byte, i) => raw[i] === byte);
  const bytes = bom ? raw.subarray(UTF8_BOM.length) : raw;
  const at = bom ? UTF8_BOM.length : 0;
  if (bytes.length === 0 || bytes[0] === 0x0d || bytes[0] === 0x0a) return { bytes, at };
  const probe = new TextDecoder('utf-8').decode(bytes.subarray(0, FIRST_LINE_PROBE_BYTES));
  if (startsWithHeader(probe)) return { bytes, at };
  const withHead = new Uint8Array(bytes.length + CRLF.length);
  withHead.set(CRLF, 0);
  withHead.set(bytes, CRLF.length);
  return { bytes: withHead, at: at - CRLF.length };
}

/**
 * The attachment's range in `raw` (the parser read `raw` from offset `at` on), kept only when
 * decoding it gives exactly the attachment's bytes: a reader that decodes the range later
 * then gets what the parser got (domain/raw-range.ts).
 */
function checkedRange(raw: Uint8Array, content: Uint8Array, range: RawRange | undefined, at: number): RawRange | null {
  if (range === undefined) return null;
  const start = range.start + at;
  const end = range.end + at;
  if (start < 0 || end > raw.byteLength || start > end) return null;
  const decoded = decodeRawRange(raw.subarray(start, end), range.encoding);
  return Buffer.from(decoded.buffer, decoded.byteOffset, decoded.byteLength).equals(content) ? { start, end, encoding: range.encoding } : null;
}

function contentBytes(content: Attachment['content']): Uint8Array {
  if (typeof content === 'string') return new TextEncoder().encode(content);
  return content instanceof Uint8Array ? content : new Uint8Array(content);
}

/** Content-ID without its angle brackets, as `cid:` URLs reference it (RFC 2392). */
function contentIdOf(value: string | undefined): string | null {
  const id = cleanLine(value ?? '', MAX_CONTENT_ID_CHARS).replace(/^<|>$/g, '').trim();
  return id === '' ? null : id;
}

function toAttachment(attachment: Attachment, index: number, rangeOf: (attachment: Attachment, content: Uint8Array) => RawRange | null): ParsedAttachment {
  const content = contentBytes(attachment.content);
  const type = attachment.mimeType.trim().toLowerCase();
  const contentType = MIME_TYPE.test(type) ? type : 'application/octet-stream';
  const contentId = contentIdOf(attachment.contentId);
  return {
    filename: safeFilename(attachment.filename ?? undefined, index + 1, contentType),
    contentType,
    content,
    rawRange: rangeOf(attachment, content),
    contentId,
    // Shown in the HTML rather than listed: referenced from multipart/related by Content-ID.
    // A bare `inline` disposition does not count (Apple Mail marks real attachments so).
    inline: attachment.related === true || (attachment.disposition === 'inline' && contentId !== null),
  };
}

function toParsedMail(raw: Uint8Array, email: Email, limits: MailLimits, rangeOf: (attachment: Attachment, content: Uint8Array) => RawRange | null): ParsedMail {
  const summary = readHeaders(
    email.headers.map((header) => ({ name: header.originalKey, value: header.value })),
    limits,
  );
  const body = mailBody(email.text, email.html, limits.maxTextChars);
  const attachments = email.attachments.slice(0, limits.maxAttachments).map((attachment, index) => toAttachment(attachment, index, rangeOf));
  // Nothing readable came out (e.g. a multipart whose boundary is never declared or never
  // used): show the raw body rather than an empty message. Not when there was HTML that
  // sanitised to nothing, which would show the removed markup as text.
  const unreadable = body.text === '' && email.html === undefined && attachments.length === 0;
  const text = unreadable ? rawBodyText(raw, limits.maxTextChars) : body.text;
  // Computed here, once per message and inside the parse worker, never per read (docs/api.md "What a message tells").
  return {
    ...summary,
    ...body,
    text,
    attachments,
    codes: extractMessageCodes(summary.subject, { html: body.html, text }),
    links: extractLinks(body.html, text),
  };
}

/**
 * A MailParser with the given limits that parses on the calling thread. It never rejects:
 * when postal-mime fails the headers-only fallback runs, and if even that fails an empty
 * parse is returned (the caller stores the raw message in every case). Work is linear in
 * the message size, which the SMTP layer bounds. The service parses through
 * createMailParser (parse-mail.ts), which runs this in worker threads.
 */
export function createInlineMailParser(options: MailParserOptions = {}): MailParser {
  const limits: MailLimits = { ...DEFAULT_MAIL_LIMITS, ...options.limits };
  const report = safeReporter(options.onParseError);

  return async (raw) => {
    try {
      const problem = structureProblem(raw, limits);
      if (problem !== null) throw new Error(`Message too costly to parse as MIME: ${problem}`);
      const input = prepareInput(raw);
      const parser = new ExactPostalMime({
        attachmentEncoding: 'arraybuffer',
        maxNestingDepth: limits.maxNestingDepth,
        maxHeadersSize: limits.maxHeaderBytes,
        maxRfc822NestingDepth: limits.maxRfc822NestingDepth,
      });
      const email = await parser.parse(input.bytes);
      return toParsedMail(raw, email, limits, (attachment, content) => checkedRange(raw, content, parser.rangeOf(attachment), input.at));
    } catch (error) {
      report(error);
    }
    return fallbackOrEmpty(raw, limits, report);
  };
}

/** onParseError made safe to call: a failing reporter must not turn a recovered parse into a failed delivery. */
export function safeReporter(onParseError: MailParserOptions['onParseError']): (error: unknown) => void {
  return (error) => {
    try {
      onParseError?.(error);
    } catch {
      // Swallowed on purpose, see above.
    }
  };
}

/** The headers-only fallback parse, or an empty parse if even that fails; never throws (the raw message is stored either way). */
export function fallbackOrEmpty(raw: Uint8Array, limits: MailLimits, report: (error: unknown) => void): ParsedMail {
  try {
    return fallbackParse(raw, limits);
  } catch (error) {
    report(error);
    return { ...EMPTY_MAIL, headers: [], attachments: [], codes: [], links: [] };
  }
}

