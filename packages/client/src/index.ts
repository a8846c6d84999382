/**
 * @tempinbox/client: a tempinbox server from code. Uses only `fetch` (no Node built-ins), so
 * it runs in Node ≥ 22.19 and in browsers alike.
 */
export { TempInboxClient, DEFAULT_BASE_URL, type ClientOptions, type CreatedInbox } from './client.js';
export { Inbox, type InboxInit, type LinkWaitOptions, type WaitOptions } from './inbox.js';
export { TempInboxError, WaitTimeoutError, type WaitFilters } from './errors.js';
export type { FollowOptions } from './follow.js';
export { verifyWebhookSignature, WEBHOOK_SIGNATURE_HEADER } from './webhook-signature.js';
export type * from './api-types.js';
