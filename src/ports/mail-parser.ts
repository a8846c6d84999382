import type { ParsedMail } from '../domain/types.js';

/**
 * Turns raw RFC 5322 bytes into what is stored and shown. Never returns unsanitised HTML: a
 * hostile message yields whatever could be parsed. It rejects only with
 * AppError('unavailable') when it cannot take more work now (the sender is told to retry).
 */
export type MailParser = (raw: Uint8Array, context: { envelopeFrom: string; recipient: string }) => Promise<ParsedMail>;

/** A MailParser holding resources (worker threads) that close() releases; parses after it are refused. */
export type ClosableMailParser = MailParser & { close(): Promise<void> };
