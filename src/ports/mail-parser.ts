import type { ParsedMail } from '../domain/types.js';

/**
 * Turns raw RFC 5322 bytes into what is stored and shown. Must never throw and never
 * return unsanitised HTML: a hostile message yields whatever could be parsed.
 */
export type MailParser = (raw: Uint8Array, context: { envelopeFrom: string; recipient: string }) => Promise<ParsedMail>;
