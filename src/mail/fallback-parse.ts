import type { ParsedMail } from '../domain/types.js';
import { cleanText } from './clean-text.js';
import { extractCodes } from './extract-codes.js';
import { mailBody, type MailBody } from './mail-body.js';
import type { MailLimits } from './mail-limits.js';
import { readHeaders, type RawHeader } from './read-headers.js';

/** A header line: a field name, optional blanks, a colon (RFC 5322 §2.2, §3.6.8). */
const HEADER_LINE = /^([\x21-\x39\x3b-\x7e]+)[ \t]*:(.*)$/s;

/** Raw header input kept per header while unfolding, as a multiple of the value cap. */
const UNFOLD_FACTOR = 4;

/** Whether a message starts with a header line rather than with body text. */
export function startsWithHeader(source: string): boolean {
  const end = source.search(/[\r\n]/);
  return HEADER_LINE.test(end < 0 ? source : source.slice(0, end));
}

function splitMessage(source: string): { head: string; body: string } {
  if (!startsWithHeader(source)) return { head: '', body: source };
  const blank = /\r?\n\r?\n/.exec(source);
  if (blank === null) return { head: source, body: '' };
  return { head: source.slice(0, blank.index), body: source.slice(blank.index + blank[0].length) };
}

function unfold(head: string, maxValueChars: number): RawHeader[] {
  const headers: RawHeader[] = [];
  const cap = maxValueChars * UNFOLD_FACTOR;
  for (const line of head.split(/\r?\n/)) {
    const last = headers[headers.length - 1];
    if (/^[ \t]/.test(line)) {
      // RFC 5322 §2.2.3: a continuation line; unfolding keeps the whitespace.
      if (last !== undefined && last.value.length < cap) last.value += line;
      continue;
    }
    const match = HEADER_LINE.exec(line);
    if (match?.[1] !== undefined) headers.push({ name: match[1], value: (match[2] ?? '').slice(0, cap).trim() });
  }
  return headers;
}

function firstValue(headers: readonly RawHeader[], name: string): string {
  return headers.find((header) => header.name.toLowerCase() === name)?.value.trim().toLowerCase() ?? '';
}

/** Body of a single-part text message; nothing for multiparts and binary parts. */
function simpleBody(headers: readonly RawHeader[], body: string, maxTextChars: number): MailBody {
  const type = firstValue(headers, 'content-type');
  const encoding = firstValue(headers, 'content-transfer-encoding');
  let content: string;
  if (encoding === '' || /^(?:7bit|8bit|binary|quoted-printable)\b/.test(encoding)) {
    content = body;
  } else if (/^base64\b/.test(encoding)) {
    content = Buffer.from(body, 'base64').toString('utf8');
  } else {
    return { text: '', html: null };
  }
  if (type === '' || type.startsWith('text/plain')) return mailBody(content, undefined, maxTextChars);
  if (type.startsWith('text/html')) return mailBody(undefined, content, maxTextChars);
  return { text: '', html: null };
}

/**
 * The body section of the raw message as text, undecoded: the last resort when no part of
 * a message could be read (a boundary that is never declared or never used, a tree too
 * deep to parse). Shown as text, so MIME noise is ugly but harmless, and a verification
 * code in a broken message is still there to read.
 */
export function rawBodyText(raw: Uint8Array, maxChars: number): string {
  return asText(splitMessage(new TextDecoder('utf-8').decode(raw)).body, maxChars);
}

function asText(body: string, maxChars: number): string {
  return cleanText(body, maxChars).replace(/\r\n?/g, '\n').trim();
}

/**
 * The recovery path when the MIME parser gives up (nesting or header limits, or a parser
 * bug): headers split naively from the raw bytes, and the body when the message is a
 * single text part. Multipart structure and attachments are not recovered; the raw
 * message, stored by the caller, still has them.
 */
export function fallbackParse(raw: Uint8Array, limits: MailLimits): ParsedMail {
  const source = new TextDecoder('utf-8').decode(raw);
  const { head, body } = splitMessage(source);
  const rawHeaders = unfold(head, limits.maxHeaderValueChars);
  const summary = readHeaders(rawHeaders, limits);
  const readable = simpleBody(rawHeaders, body, limits.maxTextChars);
  const isHtml = firstValue(rawHeaders, 'content-type').startsWith('text/html');
  const text = readable.text === '' && !isHtml ? asText(body, limits.maxTextChars) : readable.text;
  // Codes from the subject only and no links: this path runs on the main thread after a
  // worker failed, so it does no body-sized work beyond the split above.
  return { ...summary, ...readable, text, attachments: [], codes: extractCodes(summary.subject, ''), links: [] };
}
