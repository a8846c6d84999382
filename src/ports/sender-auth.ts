import type { SenderAuth } from '../domain/sender-auth.js';

/** What the receiving server knows of one SMTP transaction, for the sender checks. */
export interface SenderAuthInput {
  /** The message bytes as received (without our trace headers). */
  message: Uint8Array;
  /** The client's IP address as seen on the socket. */
  clientAddress: string;
  /** The name the client gave in HELO/EHLO. */
  helo: string;
  /** MAIL FROM path; '' for the null sender `<>`. */
  envelopeFrom: string;
}

/** The verdicts and the `Authentication-Results:` header (RFC 8601) that records them. */
export interface SenderAuthOutcome {
  auth: SenderAuth;
  /** Header line(s), folded and CRLF-ended, to put in front of the received bytes. */
  header: Uint8Array;
}

/**
 * Checks SPF, DKIM, DMARC and ARC of a received message. Never rejects and never takes much
 * longer than its DNS budget: what could not be looked up in time is `temperror`.
 */
export interface SenderAuthenticator {
  check(input: SenderAuthInput): Promise<SenderAuthOutcome>;
}
