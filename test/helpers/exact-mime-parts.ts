/**
 * An independent reading of a message's attachments, for tests only: a small MIME walker
 * written from the RFCs that shares no code with the product's parser, so the product's
 * attachment bytes can be checked against what the message really carries.
 *
 * - RFC 2046 §5.1.1: a body part lies between the delimiter lines; the line break that
 *   precedes a delimiter belongs to the delimiter, not to the part.
 * - RFC 2045 §6.2: 7bit, 8bit and binary are the identity; §6.7 quoted-printable; §6.8 base64.
 * - A part is an attachment unless it is a text/plain or text/html body (or `text` without
 *   a subtype, RFC 2045 §5.2) that is not marked `attachment`, or a message/rfc822 that is
 *   forwarded inline, whose own attachments count instead.
 */

/** One attachment as the message carries it. */
export interface ExactPart {
  contentType: string;
  filename: string | null;
  transferEncoding: string;
  bytes: Buffer;
}

interface Header {
  name: string;
  value: string;
}

const LF = 0x0a;
const CR = 0x0d;

/** Lines of a buffer with their start, the end of their content and the end of their line break. */
function lines(buf: Buffer): { start: number; contentEnd: number; end: number }[] {
  const out: { start: number; contentEnd: number; end: number }[] = [];
  let start = 0;
  while (start < buf.length) {
    const lf = buf.indexOf(LF, start);
    if (lf < 0) {
      out.push({ start, contentEnd: buf.length, end: buf.length });
      break;
    }
    const contentEnd = lf > start && buf[lf - 1] === CR ? lf - 1 : lf;
    out.push({ start, contentEnd, end: lf + 1 });
    start = lf + 1;
  }
  return out;
}

function splitEntity(buf: Buffer): { headers: Header[]; body: Buffer } {
  const headers: Header[] = [];
  for (const line of lines(buf)) {
    const text = buf.subarray(line.start, line.contentEnd).toString('latin1');
    if (text === '') return { headers, body: buf.subarray(line.end) };
    const last = headers[headers.length - 1];
    if (/^[ \t]/.test(text) && last !== undefined) {
      last.value += text;
      continue;
    }
    const colon = text.indexOf(':');
    if (colon > 0) headers.push({ name: text.slice(0, colon).trim().toLowerCase(), value: text.slice(colon + 1).trim() });
  }
  return { headers, body: Buffer.alloc(0) };
}

function header(headers: Header[], name: string): string {
  return headers.find((h) => h.name === name)?.value ?? '';
}

function mainValue(value: string): string {
  return (value.split(';')[0] ?? '').trim().toLowerCase();
}

function param(value: string, name: string): string | null {
  const match = new RegExp(`;\\s*${name}\\s*=\\s*(?:"([^"]*)"|([^;\\s]*))`, 'i').exec(value);
  return match === null ? null : (match[1] ?? match[2] ?? '');
}

/** RFC 2045 §6.7: soft breaks removed, trailing blanks (rule 3) dropped, `=XX` decoded, hard breaks kept as they are. */
export function decodeQuotedPrintable(buf: Buffer): Buffer {
  const out: number[] = [];
  for (const line of lines(buf)) {
    let end = line.contentEnd;
    while (end > line.start && (buf[end - 1] === 0x20 || buf[end - 1] === 0x09)) end--;
    const soft = end > line.start && buf[end - 1] === 0x3d;
    if (soft) end--;
    for (let i = line.start; i < end; i++) {
      const hex = buf.subarray(i + 1, i + 3).toString('latin1');
      if (buf[i] === 0x3d && i + 2 < end && /^[0-9a-fA-F]{2}$/.test(hex)) {
        out.push(parseInt(hex, 16));
        i += 2;
      } else {
        out.push(buf[i] ?? 0);
      }
    }
    if (!soft) for (let i = line.contentEnd; i < line.end; i++) out.push(buf[i] ?? 0);
  }
  return Buffer.from(out);
}

/** RFC 2045 §6.8: characters outside the alphabet are ignored. */
export function decodeBase64(buf: Buffer): Buffer {
  return Buffer.from(buf.toString('latin1').replace(/[^A-Za-z0-9+/]/g, ''), 'base64');
}

function decode(body: Buffer, encoding: string): Buffer {
  if (encoding === 'base64') return decodeBase64(body);
  if (encoding === 'quoted-printable') return decodeQuotedPrintable(body);
  return Buffer.from(body);
}

/** The body parts of a multipart body, delimited by `--boundary` lines (RFC 2046 §5.1.1). */
function multipartBodies(body: Buffer, boundary: string): Buffer[] {
  const parts: Buffer[] = [];
  let open: number | null = null;
  let previousBreakStart = 0;
  for (const line of lines(body)) {
    const text = body.subarray(line.start, line.contentEnd).toString('latin1').replace(/[ \t]+$/, '');
    const isDelimiter = text === `--${boundary}`;
    const isClose = text === `--${boundary}--`;
    if (isDelimiter || isClose) {
      // The line break before the delimiter belongs to it; at the very start there is none.
      if (open !== null) parts.push(body.subarray(open, Math.max(open, line.start === 0 ? 0 : previousBreakStart)));
      if (isClose) return parts;
      open = line.end;
    }
    previousBreakStart = line.contentEnd;
  }
  if (open !== null) parts.push(body.subarray(open));
  return parts;
}

function walk(entity: Buffer, out: ExactPart[]): void {
  const { headers, body } = splitEntity(entity);
  const contentTypeValue = header(headers, 'content-type');
  const type = mainValue(contentTypeValue) || 'text/plain';
  const disposition = header(headers, 'content-disposition');
  const transferEncoding = mainValue(header(headers, 'content-transfer-encoding')) || '7bit';
  if (type.startsWith('multipart/')) {
    const boundary = param(contentTypeValue, 'boundary');
    if (boundary !== null) for (const part of multipartBodies(body, boundary)) walk(part, out);
    return;
  }
  const attachmentDisposition = mainValue(disposition) === 'attachment';
  const bytes = decode(body, transferEncoding);
  if (type === 'message/rfc822' && !attachmentDisposition) {
    walk(bytes, out);
    return;
  }
  const textBody = type === 'text/plain' || type === 'text/html' || type === 'text';
  if (textBody && !attachmentDisposition) return;
  out.push({ contentType: type, filename: param(disposition, 'filename') ?? param(contentTypeValue, 'name'), transferEncoding, bytes });
}

/** Every attachment of a message, in document order, with its exact decoded bytes. */
export function exactAttachments(raw: Buffer): ExactPart[] {
  const out: ExactPart[] = [];
  walk(raw, out);
  return out;
}
