/**
 * Every bound the parser applies to a message, in one place. The SMTP layer already caps the
 * whole message (MAX_MESSAGE_BYTES); these bound the work and the stored size of each part
 * of a parse, so that a crafted message can neither stall the process nor bloat every row
 * and listing that shows it. The raw message is always stored too, so a value cut here is
 * never lost.
 */
export interface MailLimits {
  /**
   * Deepest MIME multipart nesting parsed. Real mail nests under ~10 (mixed > related >
   * alternative, plus a forward or two); deeper trees exist to attack recursive walkers.
   * Over it postal-mime rejects the parse and the headers-only fallback runs.
   */
  maxNestingDepth: number;
  /**
   * How many message/rfc822 parts inside each other are parsed inline. Each level is a new
   * parser with fresh limits, so this multiplies every other bound; deeper ones stay
   * attachments.
   */
  maxRfc822NestingDepth: number;
  /**
   * Header bytes across all parts. Real headers (Received, DKIM, ARC chains) stay under
   * ~100 KB; 1 MiB is generous and still cheap. Over it the fallback parse runs.
   */
  maxHeaderBytes: number;
  /**
   * Lines parsed with postal-mime (more goes to the fallback). A 10 MiB message of
   * 76-character base64 lines has ~135k; at postal-mime's worst per-line cost this bounds a
   * parse to ~1.5 s. Scale it with MAX_MESSAGE_BYTES / 70 when that is raised.
   */
  maxLines: number;
  /**
   * Lines starting with `--` (possible MIME delimiters) parsed with postal-mime. Each part
   * costs up to ~50 µs; real mail has a few per attachment, 5000 bounds a parse to ~250 ms.
   */
  maxParts: number;
  /** Headers kept in the list. Legitimate mail has under ~100; each becomes a stored row. */
  maxHeaders: number;
  /** Attachments kept. More is a zip-bomb-like fan-out of rows, not real mail. */
  maxAttachments: number;
  /** Longest decoded header value kept (16 KiB): DKIM/ARC signatures fit, a 1 MB line does not. */
  maxHeaderValueChars: number;
  /** Longest subject kept: it is shown in every listing; RFC 5322 lines stop at 998 anyway. */
  maxSubjectChars: number;
  /** Longest From/To kept: a few dozen recipients fit, a megabyte of addresses does not. */
  maxAddressChars: number;
  /** Longest text body kept (2 Mi UTF-16 units); text costs nothing to clean, unlike HTML. */
  maxTextChars: number;
}

/** The limits parseMail uses. */
export const DEFAULT_MAIL_LIMITS: Readonly<MailLimits> = Object.freeze({
  maxNestingDepth: 50,
  maxRfc822NestingDepth: 5,
  maxHeaderBytes: 1024 * 1024,
  maxLines: 150_000,
  maxParts: 5000,
  maxHeaders: 1000,
  maxAttachments: 100,
  maxHeaderValueChars: 16 * 1024,
  maxSubjectChars: 1000,
  maxAddressChars: 2000,
  maxTextChars: 2 * 1024 * 1024,
});
