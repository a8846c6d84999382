/**
 * The sender-checks thread of worker-sender-authenticator.ts: one MailauthSenderAuthenticator,
 * and so one DNS answer cache, for every message of the process; many checks at once, since
 * most of a check's time can be a wait for DNS.
 */
import { workerData } from 'node:worker_threads';
import type { SenderAuthInput, SenderAuthOutcome } from '../ports/sender-auth.js';
import { MailauthSenderAuthenticator, type MailauthSenderAuthenticatorOptions } from './mailauth-sender-authenticator.js';

/** What the thread is started with: the authenticator's options that can cross a thread. */
export type SenderAuthWorkerData = Pick<MailauthSenderAuthenticatorOptions, 'serverName' | 'dnsTimeoutMs' | 'dnsServers'>;

/** A check's answer: the outcome, and the failure the checks recovered from (to be logged), if any. */
export interface SenderAuthReply {
  outcome: SenderAuthOutcome;
  error?: string;
}

const authenticator = new MailauthSenderAuthenticator(workerData as SenderAuthWorkerData);

/** Checks one message. */
export async function checkInWorker(input: SenderAuthInput): Promise<SenderAuthReply> {
  let error: string | undefined;
  const outcome = await authenticator.checkReporting(input, (failure) => {
    error = failure instanceof Error ? `${failure.name}: ${failure.message}` : String(failure);
  });
  // A header of its own size: a view into Node's shared 8 KiB pool would be cloned whole.
  const reply = { outcome: { auth: outcome.auth, header: new Uint8Array(outcome.header) } };
  return error === undefined ? reply : { ...reply, error };
}
