import { parseWebhookUrl, type WebhookUrl } from '../domain/webhook-url.js';
import { classifyAddress, describeRefusal, isAddressLiteral, parseAllowedNetworks, type AllowedNetworks } from './address-policy.js';
import { dnsHostResolver, type ResolveHost } from './host-resolver.js';

/**
 * A webhook URL whose every address was checked at one moment: the only addresses a sender
 * may connect to for this attempt (IPv4 first). Made only by DestinationGuard.check.
 */
export interface CheckedDestination {
  readonly url: WebhookUrl;
  readonly addresses: readonly string[];
}

/**
 * The guard's verdict: where to connect, or the catalog code and sentence to refuse with.
 * `invalid_request`: the URL breaks the rules, or its host name does not resolve;
 * `webhook_url_forbidden`: the host is, or resolves to, an address that is not public.
 */
export type GuardVerdict =
  | { ok: true; destination: CheckedDestination }
  | { ok: false; code: 'invalid_request' | 'webhook_url_forbidden'; message: string };

/** What the guard needs: WEBHOOK_ALLOWED_NETWORKS and a resolver. */
export interface DestinationGuardOptions {
  /** CIDRs as the configuration gives them (`127.0.0.0/8`); unset: none. */
  allowedNetworks?: readonly string[] | undefined;
  resolveHost: ResolveHost;
}

/**
 * Decides where a webhook may go, once per attempt (and once when the URL is set): the URL
 * rules, then every address of the host, which must be public unicast or inside
 * WEBHOOK_ALLOWED_NETWORKS. Nothing is cached between calls, so a name that now resolves
 * elsewhere (DNS rebinding) is judged by what it resolves to now.
 */
export class DestinationGuard {
  private readonly allowed: AllowedNetworks;
  private readonly resolveHost: ResolveHost;

  constructor(options: DestinationGuardOptions) {
    this.allowed = parseAllowedNetworks(options.allowedNetworks);
    this.resolveHost = options.resolveHost;
  }

  /** Checks `rawUrl`; look-ups end by `deadlineAt` (epoch ms; default: the resolver's own bound). */
  async check(rawUrl: string, deadlineAt = Number.POSITIVE_INFINITY): Promise<GuardVerdict> {
    const parsed = parseWebhookUrl(rawUrl);
    if (!parsed.ok) return { ok: false, code: 'invalid_request', message: parsed.reason };
    const { url } = parsed;
    if (isAddressLiteral(url.hostname)) {
      const verdict = classifyAddress(url.hostname, this.allowed);
      if (!verdict.allowed) return forbidden(`The webhook URL's host is ${describeRefusal(verdict)}`);
      return { ok: true, destination: { url, addresses: [url.hostname] } };
    }
    const resolution = await this.resolveHost(url.hostname, deadlineAt);
    if (resolution.kind === 'not_found') {
      return { ok: false, code: 'invalid_request', message: 'The webhook URL\'s host name does not resolve to any address.' };
    }
    if (resolution.kind === 'failed') {
      return { ok: false, code: 'invalid_request', message: `The webhook URL's host name could not be resolved (${resolution.reason}); try again later.` };
    }
    for (const address of resolution.addresses) {
      const verdict = classifyAddress(address, this.allowed);
      // The address itself is not named: it could tell a stranger what an internal name resolves to.
      if (!verdict.allowed) return forbidden(`The webhook URL's host name resolves to ${describeRefusal(verdict)}`);
    }
    return { ok: true, destination: { url, addresses: resolution.addresses } };
  }
}

function forbidden(why: string): GuardVerdict {
  return { ok: false, code: 'webhook_url_forbidden', message: `${why}; webhooks go to public addresses only.` };
}

/** The guard of the running service: WEBHOOK_ALLOWED_NETWORKS, and DNS_SERVERS / DNS_TIMEOUT_MS as the sender checks use them. */
export function createDestinationGuard(config: {
  webhookAllowedNetworks: readonly string[] | undefined;
  dnsServers: readonly string[] | undefined;
  dnsTimeoutMs: number;
}): DestinationGuard {
  return new DestinationGuard({ allowedNetworks: config.webhookAllowedNetworks, resolveHost: dnsHostResolver(config.dnsServers, config.dnsTimeoutMs) });
}
