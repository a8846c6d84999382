import { decodeWords } from 'postal-mime';
import type { MailHeader } from '../domain/types.js';
import { cleanLine, truncate } from './clean-text.js';

/** A header as found in the message: name as written, value unfolded, not yet decoded. */
export interface RawHeader {
  name: string;
  value: string;
}

/** The header fields ParsedMail carries, decoded and cleaned. */
export interface HeaderSummary {
  headers: MailHeader[];
  from: string;
  to: string;
  subject: string;
  messageId: string | null;
}

/** Bounds applied while reading headers. */
export interface HeaderLimits {
  maxHeaders: number;
  maxHeaderValueChars: number;
  maxSubjectChars: number;
  maxAddressChars: number;
}

/**
 * RFC 5322 §3.6.8 field name: printable US-ASCII except the colon (RFC 6532 allows UTF-8
 * only in values). A header-section line that is not `name: value` is not a header; the
 * raw message keeps it. Names past 256 characters are noise, not fields.
 */
const FIELD_NAME = /^[\x21-\x39\x3b-\x7e]{1,256}$/;

/**
 * RFC 5322 §3.5 caps a line at 998 characters; a Message-ID is one token and needs no more.
 */
const MAX_MESSAGE_ID_CHARS = 998;

/** Encoded words can shrink a lot when decoded; this much raw input is ever decoded. */
const DECODE_INPUT_FACTOR = 4;

/** RFC 2047 decoding that never throws: on failure the raw value is shown as written. */
function decode(value: string, maxChars: number): string {
  const bounded = truncate(value, maxChars * DECODE_INPUT_FACTOR);
  try {
    return decodeWords(bounded);
  } catch {
    return bounded;
  }
}

/**
 * Turns the headers of a message into ParsedMail's fields: the first `maxHeaders` well-formed
 * headers with decoded, one-line, capped values; From and To as written (decoded); the
 * subject; the Message-ID. The first occurrence of a field wins, as in postal-mime.
 */
export function readHeaders(raw: readonly RawHeader[], limits: HeaderLimits): HeaderSummary {
  const valid = raw.filter((header) => FIELD_NAME.test(header.name));
  const first = (name: string): string | undefined =>
    valid.find((header) => header.name.toLowerCase() === name)?.value;
  const field = (name: string, maxChars: number): string => {
    const value = first(name);
    return value === undefined ? '' : cleanLine(decode(value, maxChars), maxChars);
  };

  const messageId = cleanLine(first('message-id') ?? '', MAX_MESSAGE_ID_CHARS);
  return {
    headers: valid.slice(0, limits.maxHeaders).map((header) => ({
      name: header.name,
      value: cleanLine(decode(header.value, limits.maxHeaderValueChars), limits.maxHeaderValueChars),
    })),
    from: field('from', limits.maxAddressChars),
    to: field('to', limits.maxAddressChars),
    subject: field('subject', limits.maxSubjectChars),
    messageId: messageId === '' ? null : messageId,
  };
}
