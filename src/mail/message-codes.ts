import { extractCodes, MAX_CODE_SCAN_CHARS } from './extract-codes.js';
import type { MailBody } from './mail-body.js';
import { visibleText } from './visible-text.js';

/**
 * The one-time codes of a message as a reader sees it (docs/codes.md): when it has HTML,
 * from the visible text of that HTML only (nothing hidden, and not the text part, which the
 * reader does not see and which may say something else); the text part only when there is
 * no HTML.
 */
export function extractMessageCodes(subject: string, body: MailBody): string[] {
  return extractCodes(subject, body.html === null ? body.text : visibleText(body.html, MAX_CODE_SCAN_CHARS));
}
