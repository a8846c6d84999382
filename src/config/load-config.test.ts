import { describe, expect, expectTypeOf, it } from 'vitest';
import { ConfigError, formatConfigProblem, loadConfig } from './load-config.js';
import { CONFIG_SCHEMA, type Config, type LogLevel } from './schema.js';

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems.map(formatConfigProblem);
    throw error;
  }
  return [];
}

describe('configuration', () => {
  it('has the defaults of docs/configuration.md', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      smtpPort: 2525,
      domains: ['tempinbox.test'],
      databaseUrl: 'sqlite:./data/tempinbox.db',
      freeTtlSeconds: 1800,
      premiumTtlSeconds: 2_592_000,
      premiumMaxInboxes: 10,
      maxMessageBytes: 10_485_760,
      freeMaxMessages: 100,
      premiumMaxMessages: 1000,
      freeMaxBytes: 52_428_800,
      premiumMaxBytes: 524_288_000,
      sweepIntervalSeconds: 60,
      rateLimits: true,
      trustProxy: false,
      logLevel: 'info',
      mailAuth: true,
      dnsTimeoutMs: 3000,
      webhookConcurrency: 16,
      webhookRetryBaseSeconds: 10,
    });
    expect(config.publicUrl).toBeUndefined();
    expect(config.dnsServers).toBeUndefined();
    expect(config.webhookAllowedNetworks).toBeUndefined();
  });

  it('parses every variable', () => {
    const config = loadConfig({ PORT: '0', DOMAINS: 'A.test, b.test', RATE_LIMITS: 'off', TRUST_PROXY: 'true', PUBLIC_URL: 'https://mail.example.org/' });
    expect(config).toMatchObject({ port: 0, domains: ['a.test', 'b.test'], rateLimits: false, trustProxy: true, publicUrl: 'https://mail.example.org' });
  });

  it('parses the sender-check variables', () => {
    expect(loadConfig({ MAIL_AUTH: 'off', DNS_SERVERS: '127.0.0.1:5353, 192.0.2.1,[::1]:53,2001:db8::1', DNS_TIMEOUT_MS: '500' })).toMatchObject({
      mailAuth: false,
      dnsServers: ['127.0.0.1:5353', '192.0.2.1', '[::1]:53', '2001:db8::1'],
      dnsTimeoutMs: 500,
    });
  });

  it('parses the webhook variables, networks in normal form', () => {
    expect(
      loadConfig({ WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8, 10.0.0.0/8,FD00:0::/8,::ffff:127.0.0.0/104', WEBHOOK_CONCURRENCY: '1', WEBHOOK_RETRY_BASE_SECONDS: '1' }),
    ).toMatchObject({
      webhookAllowedNetworks: ['127.0.0.0/8', '10.0.0.0/8', 'fd00::/8', '::ffff:7f00:0/104'],
      webhookConcurrency: 1,
      webhookRetryBaseSeconds: 1,
    });
    expect(loadConfig({ WEBHOOK_ALLOWED_NETWORKS: '' }).webhookAllowedNetworks).toBeUndefined();
  });

  it.each([
    [{ WEBHOOK_ALLOWED_NETWORKS: '127.0.0.1' }, 'WEBHOOK_ALLOWED_NETWORKS="127.0.0.1": expected a comma-separated list of networks in CIDR notation'],
    [{ WEBHOOK_ALLOWED_NETWORKS: '10.0.0.0/8,not-a-net/8' }, 'WEBHOOK_ALLOWED_NETWORKS="10.0.0.0/8,not-a-net/8"'],
    [{ WEBHOOK_ALLOWED_NETWORKS: '10.0.0.0/33' }, 'WEBHOOK_ALLOWED_NETWORKS="10.0.0.0/33"'],
    // Octal in disguise: ipaddr.js alone would read it as 8.0.0.0/8.
    [{ WEBHOOK_ALLOWED_NETWORKS: '010.0.0.0/8' }, 'WEBHOOK_ALLOWED_NETWORKS="010.0.0.0/8"'],
    [{ WEBHOOK_ALLOWED_NETWORKS: '10.1.2.3/8' }, 'WEBHOOK_ALLOWED_NETWORKS="10.1.2.3/8": expected a comma-separated list of networks in CIDR notation with the host bits zero'],
    [{ WEBHOOK_ALLOWED_NETWORKS: 'fd00::1/8' }, 'WEBHOOK_ALLOWED_NETWORKS="fd00::1/8"'],
    [{ WEBHOOK_ALLOWED_NETWORKS: ',' }, 'WEBHOOK_ALLOWED_NETWORKS=","'],
    [{ WEBHOOK_CONCURRENCY: '0' }, 'WEBHOOK_CONCURRENCY="0": expected an integer from 1 to 256'],
    [{ WEBHOOK_CONCURRENCY: '257' }, 'WEBHOOK_CONCURRENCY="257"'],
    [{ WEBHOOK_RETRY_BASE_SECONDS: '0' }, 'WEBHOOK_RETRY_BASE_SECONDS="0": expected an integer from 1 to 600'],
    [{ WEBHOOK_RETRY_BASE_SECONDS: '1.5' }, 'WEBHOOK_RETRY_BASE_SECONDS="1.5"'],
    [{ MAIL_AUTH: 'maybe' }, 'MAIL_AUTH="maybe": expected on or off'],
    [{ DNS_SERVERS: 'dns.example.org' }, 'DNS_SERVERS="dns.example.org": expected a comma-separated list of resolver IP addresses'],
    [{ DNS_SERVERS: '127.0.0.1:99999' }, 'DNS_SERVERS="127.0.0.1:99999"'],
    [{ DNS_SERVERS: '300.1.1.1' }, 'DNS_SERVERS="300.1.1.1"'],
    [{ DNS_TIMEOUT_MS: '0' }, 'DNS_TIMEOUT_MS="0": expected an integer from 100 to 30000'],
    [{ PORT: 'abc' }, 'PORT="abc": expected an integer from 0 to 65535'],
    [{ PORT: '70000' }, 'PORT="70000"'],
    [{ DOMAINS: '' }, 'DOMAINS="": expected a comma-separated list'],
    [{ DOMAINS: 'a.test,a.test' }, 'DOMAINS="a.test,a.test"'],
    [{ DOMAINS: 'not a domain' }, 'DOMAINS="not a domain"'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL="mysql://x": expected sqlite:<path>'],
    [{ FREE_TTL_SECONDS: '-1' }, 'FREE_TTL_SECONDS="-1"'],
    [{ RATE_LIMITS: 'maybe' }, 'RATE_LIMITS="maybe": expected on or off'],
    [{ PUBLIC_URL: 'ftp://x' }, 'PUBLIC_URL="ftp://x": expected an http:// or https:// URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL="loud": expected one of'],
    [{ TLS_CERT_FILE: '/nonexistent/cert.pem' }, 'TLS_KEY_FILE=""'],
    [{ TLS_CERT_FILE: '/nonexistent/c.pem', TLS_KEY_FILE: '/nonexistent/k.pem' }, 'TLS_CERT_FILE="/nonexistent/c.pem": expected a readable PEM file'],
  ])('reports %j in one line naming variable, value and expectation', (env, expected) => {
    const lines = problems(env as Record<string, string>);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join('\n')).toContain(expected);
    for (const line of lines) expect(line).not.toContain('\n');
  });

  it('treats an empty optional variable as unset, but an empty required one as an error', () => {
    expect(loadConfig({ PUBLIC_URL: '', TLS_CERT_FILE: '', TLS_KEY_FILE: '' })).toMatchObject({ publicUrl: undefined, tlsCertFile: undefined });
    expect(problems({ PORT: '' })).toHaveLength(1);
  });

  it('reports every bad variable at once', () => {
    expect(problems({ PORT: 'x', SMTP_PORT: 'y' })).toHaveLength(2);
  });

  it('gives every variable of the schema a key, undefined when optional and unset', () => {
    const config = loadConfig({});
    expect(Object.keys(config)).toEqual(CONFIG_SCHEMA.map((entry) => entry.key));
    const unset = CONFIG_SCHEMA.filter((entry) => entry.defaultText === undefined).map((entry) => entry.key);
    expect(unset).toEqual(['publicUrl', 'tlsCertFile', 'tlsKeyFile', 'dnsServers', 'webhookAllowedNetworks']);
    for (const key of unset) expect(config[key]).toBeUndefined();
  });

  it('reads the log level in any case', () => {
    expect(loadConfig({ LOG_LEVEL: ' DEBUG ' }).logLevel).toBe('debug');
  });

  // Checked by `npm run typecheck`: the type of each key comes from its entry's parser, and
  // an entry without a default adds undefined.
  it('derives the Config type from the schema', () => {
    expectTypeOf<Config['port']>().toEqualTypeOf<number>();
    expectTypeOf<Config['domains']>().toEqualTypeOf<string[]>();
    expectTypeOf<Config['rateLimits']>().toEqualTypeOf<boolean>();
    expectTypeOf<Config['logLevel']>().toEqualTypeOf<LogLevel>();
    expectTypeOf<LogLevel>().toEqualTypeOf<'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent'>();
    expectTypeOf<Config['publicUrl']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<Config['dnsServers']>().toEqualTypeOf<string[] | undefined>();
    expectTypeOf(loadConfig).returns.toEqualTypeOf<Config>();
  });
});
