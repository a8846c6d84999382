import type { MailParser } from '../ports/mail-parser.js';
import { createInlineMailParser } from './inline-mail-parser.js';
import { createWorkerMailParser, type WorkerMailParserOptions } from './worker-mail-parser.js';

export type { MailParserOptions } from './inline-mail-parser.js';

/**
 * The service's MailParser: postal-mime with the given limits, in worker threads off the
 * event loop (see createWorkerMailParser). It never rejects.
 */
export function createMailParser(options: WorkerMailParserOptions = {}): MailParser {
  return createWorkerMailParser(options);
}

/** The parser with DEFAULT_MAIL_LIMITS on the calling thread (no workers); see createInlineMailParser. */
export const parseMail: MailParser = createInlineMailParser();
