import type { WebhookDelivery } from '@tempinbox/client';

/** The secret's length the API accepts (docs/api.md, "Webhooks"): checked here first, to say so in words. */
export const SECRET_MIN_LENGTH = 16;
export const SECRET_MAX_LENGTH = 128;
/** The characters of a secret: visible ASCII, `!` to `~` (no spaces), the same bytes in every language. */
const SECRET_PATTERN = /^[\x21-\x7e]*$/;
/** The longest URL the API accepts. */
export const URL_MAX_LENGTH = 2048;

/**
 * What is wrong with the form's input before it is sent, or null when the server may judge
 * it. Only what the page can know by itself: whether the host is public is the server's call.
 */
export function webhookInputProblem(url: string, secret: string): string | null {
  const trimmed = url.trim();
  if (trimmed === '') return 'Enter the URL the messages should be sent to.';
  let parsed: URL;
  try {
    parsed = new URL(trimmed);
  } catch {
    return 'Enter a full address that starts with https:// or http://.';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return 'Enter a full address that starts with https:// or http://.';
  if (parsed.username !== '' || parsed.password !== '') return 'Leave the user name and password out of the URL: the secret signs each delivery instead.';
  if (trimmed.length > URL_MAX_LENGTH) return `The URL is too long: at most ${URL_MAX_LENGTH} characters.`;
  if (secret !== '' && (secret.length < SECRET_MIN_LENGTH || secret.length > SECRET_MAX_LENGTH)) {
    return `A secret has ${SECRET_MIN_LENGTH} to ${SECRET_MAX_LENGTH} characters. Leave it empty to get one made for you.`;
  }
  if (!SECRET_PATTERN.test(secret)) return 'A secret is letters, digits and punctuation only (ASCII, no spaces). Leave it empty to get one made for you.';
  return null;
}

/**
 * The webhook calls' own wording of the API's codes where the page-wide sentence
 * (error-text.ts) would mislead: it speaks of custom names and of requests not understood.
 */
const WEBHOOK_TEXT: Record<string, string> = {
  premium_required: 'Webhooks need Premium. Enter a license key first; a webhook set earlier can still be seen and removed.',
  invalid_request:
    'That webhook was refused: use an http:// or https:// URL whose host name exists, without a user name or password, and a secret of 16 to 128 letters, digits or punctuation marks, or none.',
};

/** The sentence for a webhook call's failure code, or undefined to use the page-wide one. */
export function webhookErrorText(code: string): string | undefined {
  return WEBHOOK_TEXT[code];
}

/** What happened to one attempt, in words: the receiver's answer, or why there was none. */
export function deliveryOutcome(delivery: Pick<WebhookDelivery, 'status' | 'error'>): { text: string; ok: boolean } {
  if (delivery.status !== null) {
    const ok = delivery.status >= 200 && delivery.status < 300;
    return { text: ok ? `Delivered (HTTP ${delivery.status})` : `Refused: HTTP ${delivery.status}`, ok };
  }
  return { text: delivery.error === null || delivery.error === '' ? 'No answer' : `Failed: ${delivery.error}`, ok: false };
}

/** What was delivered: a message, or the test event. */
export function deliveryKind(delivery: Pick<WebhookDelivery, 'message_id'>): string {
  return delivery.message_id === null ? 'Test' : 'Message';
}

/**
 * A fingerprint of the listed attempts: a refresh that follows a test or a new message stops
 * once it changes (a new attempt is recorded), instead of polling for a fixed time.
 */
export function deliveriesFingerprint(deliveries: ReadonlyArray<Pick<WebhookDelivery, 'id' | 'attempt' | 'at'>>): string {
  const newest = deliveries[0];
  return newest === undefined ? '' : `${deliveries.length}:${newest.id}:${newest.attempt}:${newest.at}`;
}
