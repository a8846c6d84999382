import { readFileSync } from 'node:fs';
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest, type RequestOptions } from 'node:https';
import type { LookupFunction } from 'node:net';
import { resolve } from 'node:path';
import { signWebhookPayload, WEBHOOK_SIGNATURE_HEADER } from '../domain/webhook-signature.js';
import { isAddressLiteral } from './address-policy.js';
import type { CheckedDestination, DestinationGuard } from './destination-guard.js';
import {
  WEBHOOK_ATTEMPT_DEADLINE_MS,
  WEBHOOK_ERROR_MAX_LENGTH,
  WEBHOOK_MAX_ADDRESSES_TRIED,
  WEBHOOK_RESPONSE_CAP_BYTES,
} from './webhook-limits.js';

/** One delivery attempt's input: where, signed with what, and the exact body. */
export interface WebhookRequest {
  url: string;
  secret: string;
  /** `Tempinbox-Delivery`: the same for every attempt of a delivery, so receivers can dedupe. */
  deliveryId: string;
  /** The JSON body as sent and signed. */
  body: string;
}

/** What an attempt came to, for its record: a 2xx is delivered; the status when one came, else why not. */
export interface AttemptOutcome {
  delivered: boolean;
  status: number | null;
  error: string | null;
}

/** What the sender needs besides the guard. */
export interface WebhookSenderOptions {
  guard: DestinationGuard;
  /** `tempinbox-webhook/<version>` (webhookUserAgent()). */
  userAgent: string;
  /** The whole attempt's deadline; WEBHOOK_ATTEMPT_DEADLINE_MS unless a test needs a shorter one. */
  deadlineMs?: number;
  responseCapBytes?: number;
  now?: () => number;
  /** Certificates to trust instead of the system's (tests with a throwaway CA); unset in the service. */
  ca?: string | Buffer;
}

/** `tempinbox-webhook/<version of package.json>`, read once by the composition root. */
export function webhookUserAgent(): string {
  // src/webhooks and dist/webhooks are both two levels below the package root.
  const manifest = JSON.parse(readFileSync(resolve(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string };
  return `tempinbox-webhook/${manifest.version}`;
}

/**
 * The host is always an address literal, so node:net never looks a name up; this lookup is
 * there so that, should that ever change, the connection fails instead of asking the system's
 * resolver for an address the guard did not check.
 */
const refuseLookup: LookupFunction = (hostname, _options, callback) => {
  callback(Object.assign(new Error(`webhook connections never look up names (${hostname})`), { code: 'ERR_WEBHOOK_LOOKUP' }), '', 4);
};

function failure(error: string): AttemptOutcome {
  return { delivered: false, status: null, error: error.slice(0, WEBHOOK_ERROR_MAX_LENGTH) };
}

/** A 2xx is delivered; a redirect is a failure and is never followed; any other status speaks for itself. */
function outcomeOfStatus(status: number): AttemptOutcome {
  if (status >= 200 && status < 300) return { delivered: true, status, error: null };
  if (status >= 300 && status < 400) return { delivered: false, status, error: 'redirect not followed' };
  return { delivered: false, status, error: null };
}

function describeError(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === 'string' ? `${code}: ${message}` : message;
}

/** One try at one address: the attempt's outcome, or that connecting failed (the next address may do). */
type TryResult = { outcome: AttemptOutcome } | { connectError: string };

/**
 * Posts webhooks: resolves and checks the destination once per attempt (DestinationGuard),
 * connects only to an address that check returned, signs, and bounds the whole attempt by
 * one deadline and the response by WEBHOOK_RESPONSE_CAP_BYTES. Redirects are not followed;
 * each attempt has its own connection (no pool that could outlive the check).
 */
export class WebhookSender {
  private readonly guard: DestinationGuard;
  private readonly userAgent: string;
  private readonly deadlineMs: number;
  private readonly responseCapBytes: number;
  private readonly now: () => number;
  private readonly ca: string | Buffer | undefined;

  constructor(options: WebhookSenderOptions) {
    this.guard = options.guard;
    this.userAgent = options.userAgent;
    this.deadlineMs = options.deadlineMs ?? WEBHOOK_ATTEMPT_DEADLINE_MS;
    this.responseCapBytes = options.responseCapBytes ?? WEBHOOK_RESPONSE_CAP_BYTES;
    this.now = options.now ?? Date.now;
    this.ca = options.ca;
  }

  /** One attempt: check the URL now, then post to what the check returned. Never throws. */
  async attempt(request: WebhookRequest): Promise<AttemptOutcome> {
    const deadlineAt = this.now() + this.deadlineMs;
    try {
      const verdict = await this.guard.check(request.url, deadlineAt);
      if (!verdict.ok) return failure(verdict.message);
      return await this.post(verdict.destination, request, deadlineAt);
    } catch (error) {
      return failure(describeError(error));
    }
  }

  /**
   * Posts to the addresses of `destination` (as DestinationGuard.check returned it), the next
   * one only when connecting to the one before failed, all by `deadlineAt`.
   */
  async post(destination: CheckedDestination, request: WebhookRequest, deadlineAt = this.now() + this.deadlineMs): Promise<AttemptOutcome> {
    const timestamp = Math.floor(this.now() / 1000);
    const headers = {
      Host: destination.url.hostHeader,
      'Content-Type': 'application/json',
      'Content-Length': String(Buffer.byteLength(request.body)),
      'User-Agent': this.userAgent,
      'Tempinbox-Delivery': request.deliveryId,
      [WEBHOOK_SIGNATURE_HEADER]: await signWebhookPayload(request.secret, timestamp, request.body),
    };
    let lastError = 'no address to connect to';
    for (const address of destination.addresses.slice(0, WEBHOOK_MAX_ADDRESSES_TRIED)) {
      if (this.now() >= deadlineAt) break;
      const result = await this.postTo(address, destination, headers, request.body, deadlineAt);
      if ('outcome' in result) return result.outcome;
      lastError = result.connectError;
    }
    return failure(this.now() >= deadlineAt ? `no answer within ${this.deadlineMs} ms` : lastError);
  }

  private postTo(address: string, destination: CheckedDestination, headers: Record<string, string>, body: string, deadlineAt: number): Promise<TryResult> {
    const { url } = destination;
    const options: RequestOptions = {
      method: 'POST',
      host: address,
      port: url.port,
      path: url.path,
      headers,
      // A connection of its own: a pooled socket could be one opened to an address of an earlier check.
      agent: false,
      lookup: refuseLookup,
    };
    if (url.protocol === 'https:') {
      // The certificate is verified against the name in the URL (SNI and the identity check
      // use `servername` when given), never against the address connected to.
      if (!isAddressLiteral(url.hostname)) options.servername = url.hostname;
      if (this.ca !== undefined) options.ca = this.ca;
    }
    return new Promise((resolveTry) => {
      const req: ClientRequest = (url.protocol === 'https:' ? httpsRequest : httpRequest)(options);
      let connected = false;
      let status: number | null = null;
      let settled = false;
      const finish = (result: TryResult): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.destroy();
        resolveTry(result);
      };
      const timer = setTimeout(() => {
        // A 2xx that came in time is a delivery even if its body is still trickling in.
        finish({ outcome: status === null ? failure(`no answer within ${this.deadlineMs} ms`) : outcomeOfStatus(status) });
      }, Math.max(0, deadlineAt - this.now()));
      req.on('socket', (socket) => socket.once('connect', () => (connected = true)));
      req.on('error', (error) => {
        if (status !== null) finish({ outcome: outcomeOfStatus(status) });
        else if (connected) finish({ outcome: failure(describeError(error)) });
        else finish({ connectError: describeError(error) });
      });
      req.on('response', (res: IncomingMessage) => {
        const answered = res.statusCode ?? 0;
        status = answered;
        // The body is counted, never kept: only the status decides.
        const done = (): void => finish({ outcome: outcomeOfStatus(answered) });
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read >= this.responseCapBytes) done();
        });
        res.on('end', done);
        res.on('error', done);
        res.on('close', done);
      });
      req.end(body);
    });
  }
}
