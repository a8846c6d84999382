/**
 * The one declaration of every configuration variable: name, type, default, bounds and
 * help text. The `Config` type is derived from it, `loadConfig` reads it, `tempinbox --help`
 * and `docs/configuration.md` print it (scripts/gen-config-docs.ts), and nothing else in the
 * program reads process.env.
 */

import ipaddr from 'ipaddr.js';

/** What a parser returns: the value, or a phrase saying what was expected instead. */
type ParseResult<T> = { ok: true; value: T } | { ok: false; expected: string };

/** A parser of one variable's text. */
type Parse<T> = (raw: string) => ParseResult<T>;

/** One variable of the configuration table; `K` is its key in Config, `T` its parsed type. */
export interface ConfigEntry<K extends string = string, T = unknown> {
  readonly env: string;
  readonly key: K;
  /** Default as the user would write it; undefined = unset (the key's value may be undefined). */
  readonly defaultText: string | undefined;
  readonly help: string;
  readonly parse: Parse<T>;
}

const integer = (min: number, max: number): Parse<number> => (raw) => {
  const value = Number(raw);
  return /^\d+$/.test(raw.trim()) && Number.isSafeInteger(value) && value >= min && value <= max
    ? { ok: true, value }
    : { ok: false, expected: `an integer from ${min} to ${max}` };
};

const boolean = (trueWord: string, falseWord: string): Parse<boolean> => (raw) => {
  const word = raw.trim().toLowerCase();
  if ([trueWord, 'true', '1', 'yes'].includes(word)) return { ok: true, value: true };
  if ([falseWord, 'false', '0', 'no'].includes(word)) return { ok: true, value: false };
  return { ok: false, expected: `${trueWord} or ${falseWord}` };
};

const DOMAIN_PATTERN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

const domains: Parse<string[]> = (raw) => {
  const list = raw.split(',').map((d) => d.trim().toLowerCase()).filter((d) => d.length > 0);
  const bad = list.find((d) => !DOMAIN_PATTERN.test(d));
  if (list.length === 0 || bad !== undefined || new Set(list).size !== list.length) {
    return { ok: false, expected: 'a comma-separated list of distinct domain names, e.g. tempinbox.test,example.org' };
  }
  return { ok: true, value: list };
};

const databaseUrl: Parse<string> = (raw) => {
  const value = raw.trim();
  if (/^sqlite:.+/.test(value)) return { ok: true, value };
  if (/^postgres(ql)?:\/\/.+/.test(value)) return { ok: true, value };
  return { ok: false, expected: 'sqlite:<path>, sqlite::memory: or postgres://user@host:port/db' };
};

const url: Parse<string> = (raw) => {
  try {
    const parsed = new URL(raw.trim());
    if (parsed.protocol === 'http:' || parsed.protocol === 'https:') return { ok: true, value: parsed.origin };
  } catch {
    // fall through to the error below
  }
  return { ok: false, expected: 'an http:// or https:// URL, e.g. https://mail.example.org' };
};

const text: Parse<string> = (raw) =>
  raw.trim().length > 0 ? { ok: true, value: raw.trim() } : { ok: false, expected: 'a non-empty value' };

const filePath: Parse<string> = (raw) =>
  raw.trim().length > 0 ? { ok: true, value: raw.trim() } : { ok: false, expected: 'a file path' };

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
/** A pino log level. */
export type LogLevel = (typeof LOG_LEVELS)[number];
const logLevel: Parse<LogLevel> = (raw) => {
  const word = raw.trim().toLowerCase();
  const value = LOG_LEVELS.find((level) => level === word);
  return value !== undefined ? { ok: true, value } : { ok: false, expected: `one of ${LOG_LEVELS.join(', ')}` };
};

/** An IPv4 address: four decimal octets. */
const IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
/** An IPv6 address, loosely (hex groups and colons, maybe an embedded IPv4); node:dns checks it fully. */
const IPV6 = /^[0-9a-f:]*:[0-9a-f:.]*$/i;
const PORT = /^(?:6553[0-5]|655[0-2]\d|65[0-4]\d\d|6[0-4]\d{3}|[1-5]\d{4}|[1-9]\d{0,3})$/;

/** One resolver as node:dns setServers takes it: `ip`, `ip:port`, `ipv6` or `[ipv6]:port`. */
function isDnsServer(entry: string): boolean {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (bracketed !== null) return IPV6.test(bracketed[1] ?? '') && (bracketed[2] === undefined || PORT.test(bracketed[2]));
  if (IPV6.test(entry) && entry.split(':').length > 2) return true;
  const [host = '', port, ...rest] = entry.split(':');
  return rest.length === 0 && IPV4.test(host) && (port === undefined || PORT.test(port));
}

const dnsServers: Parse<string[]> = (raw) => {
  const list = raw.split(',').map((entry) => entry.trim()).filter((entry) => entry.length > 0);
  if (list.length === 0 || !list.every(isDnsServer)) {
    return { ok: false, expected: 'a comma-separated list of resolver IP addresses with optional ports, e.g. 127.0.0.1:5353,[::1]:53' };
  }
  return { ok: true, value: list };
};

/**
 * One network in CIDR notation, in normal form (`10.0.0.0/8`, `fd00::/8`), or undefined. IPv4
 * must be four decimal parts (ipaddr.js's general parser reads `010.0.0.0` as octal 8.0.0.0),
 * and the host bits must be zero: `10.1.2.3/8` could mean 10.0.0.0/8 or 10.1.2.3/32, and a
 * rule that lets traffic into internal networks must not be guessed.
 */
function network(entry: string): string | undefined {
  const v4 = ipaddr.IPv4.isValidCIDRFourPartDecimal(entry);
  if (!v4 && !ipaddr.IPv6.isValidCIDR(entry)) return undefined;
  const [address, prefix] = ipaddr.parseCIDR(entry);
  const base = v4 ? ipaddr.IPv4.networkAddressFromCIDR(entry) : ipaddr.IPv6.networkAddressFromCIDR(entry);
  return base.toString() === address.toString() ? `${base.toString()}/${prefix}` : undefined;
}

/** Networks a webhook may reach although they are not public; a bare address (no prefix) is refused. */
const networks: Parse<string[]> = (raw) => {
  const list = raw.split(',').map((entry) => entry.trim()).filter((entry) => entry.length > 0).map(network);
  if (list.length > 0 && list.every((entry) => entry !== undefined)) return { ok: true, value: list as string[] };
  return { ok: false, expected: 'a comma-separated list of networks in CIDR notation with the host bits zero, e.g. 10.0.0.0/8,fd00::/8' };
};

/**
 * Webhook deliveries in flight per node. Each holds one outgoing connection (a file
 * descriptor) for up to its 10 s deadline; past 256 a node spends its descriptors and
 * memory on slow receivers rather than on mail.
 */
const MAX_WEBHOOK_CONCURRENCY = 256;

/**
 * Largest retry base: the six attempts span 937 × base seconds, so 600 s spreads them over
 * six and a half days; a larger base is almost certainly minutes typed as seconds. The
 * smallest, 1 s, makes the schedule testable end to end.
 */
const MAX_WEBHOOK_RETRY_BASE_SECONDS = 600;

/** Ten years: longer lifetimes are almost certainly a typo (seconds vs milliseconds). */
const MAX_TTL_SECONDS = 10 * 365 * 24 * 3600;
/** 1 GiB: smtp-server buffers nothing, but we keep whole messages in memory to parse them. */
const MAX_MESSAGE_BYTES_LIMIT = 1024 * 1024 * 1024;

/** 1 TiB per inbox: far above any real quota; a larger number is a typo. */
const MAX_INBOX_BYTES = 1024 ** 4;

/**
 * Longest DNS budget accepted: past 30 s the sender's own SMTP client times out waiting for
 * the reply to DATA (RFC 5321 §4.5.3.2.6 gives it 10 minutes, common clients much less).
 */
const MAX_DNS_TIMEOUT_MS = 30_000;

/** PostgreSQL's own default max_connections is 100; a pool beyond this is a typo. */
const MAX_POOL_SIZE = 1000;

/** Every variable, in the order of docs/configuration.md. */
export const CONFIG_SCHEMA = [
  { env: 'PORT', key: 'port', defaultText: '8080', help: 'HTTP port (0 = pick a free one)', parse: integer(0, 65535) },
  { env: 'HOST', key: 'host', defaultText: '0.0.0.0', help: 'bind address of both listeners', parse: text },
  { env: 'SMTP_PORT', key: 'smtpPort', defaultText: '2525', help: 'SMTP port (25 in production; 0 = pick a free one)', parse: integer(0, 65535) },
  { env: 'DOMAINS', key: 'domains', defaultText: 'tempinbox.test', help: 'comma-separated domains served; the first is the default', parse: domains },
  { env: 'DATABASE_URL', key: 'databaseUrl', defaultText: 'sqlite:./data/tempinbox.db', help: 'sqlite:<path>, sqlite::memory:, or postgres://… / postgresql://…', parse: databaseUrl },
  { env: 'DATABASE_POOL_SIZE', key: 'databasePoolSize', defaultText: '10', help: 'PostgreSQL connections per process (ignored for SQLite); nodes × this must stay under the server\'s max_connections', parse: integer(1, MAX_POOL_SIZE) },
  { env: 'PUBLIC_URL', key: 'publicUrl', defaultText: undefined, help: 'external base URL (default http://localhost:<PORT>); https:// makes cookies Secure', parse: url },
  { env: 'FREE_TTL_SECONDS', key: 'freeTtlSeconds', defaultText: '1800', help: 'free inbox lifetime in seconds', parse: integer(1, MAX_TTL_SECONDS) },
  { env: 'PREMIUM_TTL_SECONDS', key: 'premiumTtlSeconds', defaultText: '2592000', help: 'premium inbox retention in seconds (30 days)', parse: integer(1, MAX_TTL_SECONDS) },
  { env: 'PREMIUM_MAX_INBOXES', key: 'premiumMaxInboxes', defaultText: '10', help: 'active inboxes per premium license', parse: integer(1, 10_000) },
  { env: 'MAX_MESSAGE_BYTES', key: 'maxMessageBytes', defaultText: '10485760', help: 'SMTP SIZE limit in bytes', parse: integer(1024, MAX_MESSAGE_BYTES_LIMIT) },
  { env: 'FREE_MAX_MESSAGES', key: 'freeMaxMessages', defaultText: '100', help: 'messages a free inbox holds before SMTP answers 452', parse: integer(1, 1_000_000) },
  { env: 'PREMIUM_MAX_MESSAGES', key: 'premiumMaxMessages', defaultText: '1000', help: 'messages a premium inbox holds before SMTP answers 452', parse: integer(1, 1_000_000) },
  { env: 'FREE_MAX_BYTES', key: 'freeMaxBytes', defaultText: '52428800', help: 'raw bytes a free inbox holds (50 MiB); a message that would pass it gets 452 4.2.2', parse: integer(1024, MAX_INBOX_BYTES) },
  { env: 'PREMIUM_MAX_BYTES', key: 'premiumMaxBytes', defaultText: '524288000', help: 'raw bytes a premium inbox holds (500 MiB); a message that would pass it gets 452 4.2.2', parse: integer(1024, MAX_INBOX_BYTES) },
  { env: 'MIN_FREE_DISK_BYTES', key: 'minFreeDiskBytes', defaultText: '1073741824', help: 'SQLite only: below this much free space on the database\'s file system every RCPT TO gets 452 4.3.1 and /readyz 503 (0 = never)', parse: integer(0, Number.MAX_SAFE_INTEGER) },
  { env: 'SWEEP_INTERVAL_SECONDS', key: 'sweepIntervalSeconds', defaultText: '60', help: 'how often expired data is deleted', parse: integer(1, 86_400) },
  { env: 'RATE_LIMITS', key: 'rateLimits', defaultText: 'on', help: 'off disables request-rate limits (benchmarks, tests); message caps stay', parse: boolean('on', 'off') },
  { env: 'TRUST_PROXY', key: 'trustProxy', defaultText: 'false', help: 'take the client address from X-Forwarded-For (behind a reverse proxy)', parse: boolean('true', 'false') },
  { env: 'TLS_CERT_FILE', key: 'tlsCertFile', defaultText: undefined, help: 'PEM certificate (chain) for SMTP STARTTLS; set with TLS_KEY_FILE', parse: filePath },
  { env: 'TLS_KEY_FILE', key: 'tlsKeyFile', defaultText: undefined, help: 'PEM private key for SMTP STARTTLS; set with TLS_CERT_FILE', parse: filePath },
  { env: 'LOG_LEVEL', key: 'logLevel', defaultText: 'info', help: 'pino log level', parse: logLevel },
  { env: 'MAIL_AUTH', key: 'mailAuth', defaultText: 'on', help: 'SPF, DKIM, DMARC and ARC checks of received mail; off skips them (auth is null, no Authentication-Results header)', parse: boolean('on', 'off') },
  { env: 'DNS_SERVERS', key: 'dnsServers', defaultText: undefined, help: 'comma-separated resolver addresses host[:port] (IP addresses) for the sender checks; unset: the system\'s', parse: dnsServers },
  { env: 'DNS_TIMEOUT_MS', key: 'dnsTimeoutMs', defaultText: '3000', help: 'the whole time budget of one message\'s DNS look-ups; what is not answered in time is temperror', parse: integer(100, MAX_DNS_TIMEOUT_MS) },
  { env: 'WEBHOOK_ALLOWED_NETWORKS', key: 'webhookAllowedNetworks', defaultText: undefined, help: 'comma-separated CIDRs (IPv4 or IPv6) webhooks may reach although they are not public, e.g. 10.0.0.0/8; unset: public destinations only', parse: networks },
  { env: 'WEBHOOK_CONCURRENCY', key: 'webhookConcurrency', defaultText: '16', help: 'webhook deliveries in flight per node', parse: integer(1, MAX_WEBHOOK_CONCURRENCY) },
  { env: 'WEBHOOK_RETRY_BASE_SECONDS', key: 'webhookRetryBaseSeconds', defaultText: '10', help: 'base of the webhook retry schedule: attempt 2 starts base × 1 s after attempt 1, then base × 6, 30, 180 and 720 s after the previous one (± 10 %)', parse: integer(1, MAX_WEBHOOK_RETRY_BASE_SECONDS) },
] as const satisfies readonly ConfigEntry[];

/** One entry of CONFIG_SCHEMA, with its literal key and its parser's type. */
type SchemaEntry = (typeof CONFIG_SCHEMA)[number];

/** What an entry's parser returns on success. */
type ParsedValue<E extends SchemaEntry> = E['parse'] extends Parse<infer T> ? T : never;

/**
 * The validated configuration the composition root is built from: one key per entry, of its
 * parser's type, or undefined as well when the entry has no default.
 */
export type Config = {
  [E in SchemaEntry as E['key']]: E['defaultText'] extends string ? ParsedValue<E> : ParsedValue<E> | undefined;
};
