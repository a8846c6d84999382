import { useEffect, useState } from 'preact/hooks';
import { api } from '../api/api-client.js';
import { lifetimeInWords } from '../lib/format-time.js';
import type { SessionMode } from '../lib/inbox-reducer.js';
import { WebhookSection } from './webhook-section.js';

/** Props of PremiumPanel. */
export interface PremiumPanelProps {
  mode: SessionMode;
  inboxCount: number;
  busy: boolean;
  onRedeem: (key: string) => Promise<string | null>;
  onCreate: (username: string, domain: string) => Promise<string | null>;
  /** The inbox on screen, whose webhook the Premium view shows. */
  current: { username: string; email: string };
  /** Messages the inbox on screen holds. */
  messageCount: number;
}

/**
 * Free: the license-key field. Premium: what the license gives, a custom address with a domain
 * chooser, and the webhook of the inbox on screen.
 */
export function PremiumPanel({ mode, inboxCount, busy, onRedeem, onCreate, current, messageCount }: PremiumPanelProps) {
  return mode.premium ? (
    <>
      <CustomAddress mode={mode} inboxCount={inboxCount} busy={busy} onCreate={onCreate} />
      <WebhookSection username={current.username} email={current.email} messageCount={messageCount} />
    </>
  ) : (
    <RedeemForm busy={busy} onRedeem={onRedeem} />
  );
}

function RedeemForm({ busy, onRedeem }: Pick<PremiumPanelProps, 'busy' | 'onRedeem'>) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    if (key.trim() === '') {
      setError('Enter your license key first.');
      return;
    }
    setError(await onRedeem(key));
  };
  return (
    <details class="panel premium">
      <summary>Premium: keep inboxes 30 days, choose your own names</summary>
      <form class="premium__form" onSubmit={(event) => void submit(event)} noValidate>
        <label for="license-key">License key</label>
        <div class="field-row">
          <input
            id="license-key"
            name="license-key"
            type="text"
            autocomplete="off"
            spellcheck={false}
            placeholder="TI-XXXXXXXX-XXXXXXXX-XXXXXXXX-XXXXXXXX"
            value={key}
            maxLength={200}
            aria-invalid={error !== null}
            aria-describedby={error !== null ? 'license-error' : 'license-help'}
            onInput={(event) => setKey((event.target as HTMLInputElement).value)}
          />
          <button type="submit" class="button button--primary" disabled={busy}>Activate</button>
        </div>
        {error !== null ? (
          <p id="license-error" class="field-error" role="alert">{error}</p>
        ) : (
          <p id="license-help" class="hint">Your current inbox and its mail are kept when you activate.</p>
        )}
      </form>
    </details>
  );
}

function CustomAddress({ mode, inboxCount, busy, onCreate }: Pick<PremiumPanelProps, 'mode' | 'inboxCount' | 'busy' | 'onCreate'>) {
  const [domains, setDomains] = useState<string[]>([]);
  const [domain, setDomain] = useState('');
  const [username, setUsername] = useState('');
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api.domains().then(
      (result) => {
        setDomains(result.domains);
        setDomain((chosen) => chosen || result.domains[0] || '');
      },
      () => setError('Could not load the list of domains. Reload the page to try again.'),
    );
  }, []);
  const submit = async (event: Event) => {
    event.preventDefault();
    if (username.trim() === '') {
      setError('Enter the name you want before the @.');
      return;
    }
    const failed = await onCreate(username.trim(), domain);
    setError(failed);
    if (failed === null) setUsername('');
  };
  const until = mode.premiumUntil === null ? '' : new Date(mode.premiumUntil).toLocaleDateString(undefined, { dateStyle: 'long' });
  return (
    <section class="panel premium premium--active" aria-labelledby="premium-heading">
      <h2 id="premium-heading" class="premium__heading">Premium</h2>
      <p class="premium__facts" data-testid="premium-facts">
        Active until {until}. Inboxes are kept {lifetimeInWords(mode.limits.ttl)}. {inboxCount} of {mode.limits.max_inboxes} inboxes in use.
      </p>
      <form class="premium__form" onSubmit={(event) => void submit(event)} noValidate>
        <label for="custom-username">Custom address</label>
        <div class="field-row field-row--address">
          <input
            id="custom-username"
            name="username"
            type="text"
            autocomplete="off"
            autocapitalize="none"
            spellcheck={false}
            placeholder="your-name"
            maxLength={32}
            value={username}
            aria-invalid={error !== null}
            aria-describedby={error !== null ? 'custom-error' : 'custom-help'}
            onInput={(event) => setUsername((event.target as HTMLInputElement).value)}
          />
          <span class="at" aria-hidden="true">@</span>
          <label for="custom-domain" class="visually-hidden">Domain</label>
          <select id="custom-domain" name="domain" value={domain} onChange={(event) => setDomain((event.target as HTMLSelectElement).value)}>
            {domains.map((name) => <option key={name} value={name}>{name}</option>)}
          </select>
          <button type="submit" class="button button--primary" disabled={busy || domain === ''}>Create</button>
        </div>
        {error !== null ? (
          <p id="custom-error" class="field-error" role="alert">{error}</p>
        ) : (
          <p id="custom-help" class="hint">3 to 32 letters, digits, dots, dashes or underscores.</p>
        )}
      </form>
    </section>
  );
}
