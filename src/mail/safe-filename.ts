import { repairC1 } from './clean-text.js';

/**
 * Longest attachment name kept, in code points. Filesystems stop at 255 bytes and browsers
 * show far less; 200 leaves room for a download directory's " (1)" suffixes.
 */
export const MAX_FILENAME_CHARS = 200;

/** A suffix longer than this after the last dot is not an extension worth preserving. */
const MAX_EXTENSION_CHARS = 16;

/** Work bound: no real name is longer, and every step below is linear in this. */
const MAX_INPUT_CHARS = 4096;

/**
 * Controls (C0, DEL, C1) plus invisible format characters that make a name read
 * differently from what it is: bidi overrides/isolates ("invoice\u202Efdp.exe" displays
 * as "invoiceexe.pdf"), zero-width characters, and the BOM.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const INVISIBLE = /[\u0000-\u001F\u007F-\u009F\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF]/g;

/** Characters Windows forbids in names; `/` and `\` are handled as path separators. */
const RESERVED = /[<>:"|?*]/g;

/** Names Windows maps to devices, whatever the extension. */
const WINDOWS_DEVICE = /^(?:con|prn|aux|nul|com\d|lpt\d)(?:\..*)?$/i;

// A Map, not an object literal: a content type of `constructor` must not find Object's.
const EXTENSION_BY_TYPE = new Map<string, string>(Object.entries({
  'application/pdf': '.pdf',
  'application/zip': '.zip',
  'application/json': '.json',
  'application/xml': '.xml',
  'application/msword': '.doc',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': '.docx',
  'application/vnd.ms-excel': '.xls',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': '.xlsx',
  'application/ics': '.ics',
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'image/gif': '.gif',
  'image/webp': '.webp',
  'image/bmp': '.bmp',
  'image/svg+xml': '.svg',
  'text/plain': '.txt',
  'text/html': '.html',
  'text/csv': '.csv',
  'text/calendar': '.ics',
  'message/rfc822': '.eml',
  'message/delivery-status': '.txt',
}));

/**
 * A name an attachment can be stored, listed and downloaded under: only the last path
 * segment (of `/` or `\`), no control or invisible characters, no Windows-reserved
 * characters or device names, no `..` and no leading dots, trimmed, at most 200 code points
 * with its extension kept. Falls back to `attachment-<n><ext>` (ext from the content type)
 * when nothing usable is left.
 */
export function safeFilename(name: string | undefined, fallbackIndex: number, contentType: string): string {
  const cleaned = cleanName(name ?? '');
  return cleaned === '' ? fallbackName(fallbackIndex, contentType) : cleaned;
}

/** The part after the last `/` or `\`, at most MAX_INPUT_CHARS from its end (the extension). */
function lastSegment(input: string): string {
  const segment = input.slice(Math.max(input.lastIndexOf('/'), input.lastIndexOf('\\')) + 1);
  if (segment.length <= MAX_INPUT_CHARS) return segment;
  const tail = segment.slice(-MAX_INPUT_CHARS);
  // Do not start with the second half of a surrogate pair.
  return /^[\uDC00-\uDFFF]/.test(tail) ? tail.slice(1) : tail;
}

function cleanName(input: string): string {
  let name = repairC1(lastSegment(input)).normalize('NFC').replace(INVISIBLE, '');
  name = name
    .replace(RESERVED, '')
    .replace(/\.{2,}/g, '.')
    .replace(/\s+/g, ' ');
  name = trimDotsAndSpaces(name);
  if (WINDOWS_DEVICE.test(name)) name = `_${name}`;
  return capLength(name);
}

function trimDotsAndSpaces(name: string): string {
  return name.replace(/^[.\s]+/, '').replace(/[.\s]+$/, '');
}

function capLength(name: string): string {
  const chars = Array.from(name);
  if (chars.length <= MAX_FILENAME_CHARS) return name;
  const dot = name.lastIndexOf('.');
  const extension = dot > 0 ? Array.from(name.slice(dot)) : [];
  if (extension.length > 1 && extension.length <= MAX_EXTENSION_CHARS) {
    const base = trimDotsAndSpaces(chars.slice(0, MAX_FILENAME_CHARS - extension.length).join(''));
    return base + extension.join('');
  }
  return trimDotsAndSpaces(chars.slice(0, MAX_FILENAME_CHARS).join(''));
}

function fallbackName(index: number, contentType: string): string {
  const n = Number.isSafeInteger(index) && index >= 0 ? index : 0;
  const type = (contentType.split(';')[0] ?? '').trim().toLowerCase();
  return `attachment-${n}${EXTENSION_BY_TYPE.get(type) ?? '.bin'}`;
}
