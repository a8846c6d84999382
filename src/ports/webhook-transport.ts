/**
 * How webhooks reach their receivers, in the services' terms: the destination check of a URL
 * (the rules, then every address its host resolves to) and one signed attempt. The adapter
 * (src/webhooks/) checks the destination again at every attempt and connects only to an
 * address it checked.
 */

/** A URL's verdict: its normal form, or the catalog code and sentence to refuse it with. */
export type WebhookUrlCheck =
  | { ok: true; url: string }
  | { ok: false; code: 'invalid_request' | 'webhook_url_forbidden'; message: string };

/** One attempt's input: where, signed with what, and the exact body. */
export interface WebhookPost {
  url: string;
  secret: string;
  /** `Tempinbox-Delivery`: the same for every attempt of a delivery. */
  deliveryId: string;
  /** The JSON body as sent and signed. */
  body: string;
}

/** What an attempt came to: a 2xx within the deadline is delivered; the status when one came, else why not. */
export interface WebhookPostOutcome {
  delivered: boolean;
  status: number | null;
  error: string | null;
}

/** The webhook transport: URL checks for PUT, and attempts for the worker. Neither throws. */
export interface WebhookTransport {
  checkUrl(rawUrl: string): Promise<WebhookUrlCheck>;
  post(request: WebhookPost): Promise<WebhookPostOutcome>;
}
