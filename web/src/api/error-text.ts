import { ApiError } from './api-error.js';

/** A plain sentence for every code of the contract's catalog, written for the person at the page. */
const TEXT: Record<string, string> = {
  invalid_request: 'The request was not understood. Reload the page and try again.',
  username_invalid: 'That name cannot be used: use 3 to 32 letters, digits, dots, dashes or underscores, starting and ending with a letter or digit.',
  invalid_domain: 'That domain is not offered here. Pick one from the list.',
  session_required: 'Your session has ended. Get a new address to go on.',
  premium_required: 'Custom names need Premium. Enter a license key first.',
  inbox_limit_reached: 'You already have the most inboxes your license allows. Delete one to make room.',
  cross_site_request: 'That request came from another website and was refused. Use this page directly.',
  inbox_not_found: 'This inbox no longer exists. Get a new address.',
  not_found: 'That message is gone: it was deleted or its inbox has expired.',
  method_not_allowed: 'The request was not understood. Reload the page and try again.',
  username_taken: 'That name is taken. Try another one.',
  license_invalid: 'That license key is not valid. Check it for typing mistakes; a revoked key does not work either.',
  license_session_limit: 'That license key is already in use on its maximum number of devices.',
  license_expired: 'That license key has expired.',
  inbox_expired: 'This address has expired and no longer receives mail.',
  payload_too_large: 'That is too long.',
  webhook_url_forbidden:
    'That URL points to a private, local or reserved address. Webhooks go only to servers reachable on the public internet.',
  webhook_not_found: 'This inbox has no webhook any more. Set one first.',
  rate_limited: 'Too many requests from your connection.',
  unavailable: 'The service is having trouble reaching its database. It will try again by itself.',
  internal_error: 'Something went wrong on our side. Please try again.',
  network: 'Cannot reach the server. Check your connection; the page keeps trying.',
  unexpected: 'The server gave an unexpected answer. Please try again.',
};

/** "in 3 minutes" style wording of a number of seconds. */
export function inWords(seconds: number): string {
  if (seconds < 60) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}

/** The sentence to show for a failed call; never raw JSON or a status number alone. */
export function errorText(error: unknown): string {
  if (!(error instanceof ApiError)) return TEXT.unexpected ?? '';
  const text = TEXT[error.code] ?? TEXT.unexpected ?? '';
  if (error.code === 'rate_limited' && error.retryAfterSeconds !== null) {
    return `${text} Please wait ${inWords(error.retryAfterSeconds)} and try again.`;
  }
  return text;
}
