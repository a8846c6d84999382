import type { WebhookDelivery, WebhookState } from '@tempinbox/client';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api/api-error.js';
import { api } from '../api/api-client.js';
import { errorText } from '../api/error-text.js';
import { copyText } from '../lib/copy-text.js';
import { deliveriesFingerprint, deliveryKind, deliveryOutcome, SECRET_MAX_LENGTH, URL_MAX_LENGTH, webhookErrorText, webhookInputProblem } from '../lib/webhook-text.js';

/**
 * Pause between the looks a refresh takes after a test or a new message, until a new attempt
 * is listed: the first attempt starts within a second of the message being stored.
 */
const FOLLOW_UP_INTERVAL_MS = 1000;
/**
 * Looks a refresh takes at most: a receiver has 10 s to answer before the attempt is recorded
 * as failed, plus the second before it starts and room for a slow server.
 */
const FOLLOW_UP_TRIES = 15;
/** Said after Send test until the test's attempt is listed. */
const TEST_SENT = 'Test sent. Its delivery is listed below as soon as it is made.';
/** How long "Copied" stays on the button. */
const COPIED_MS = 2000;

/** Props of WebhookSection. */
export interface WebhookSectionProps {
  /** The inbox on screen. */
  username: string;
  email: string;
  /** Messages the inbox holds: when it grows, a delivery is on its way and the list is refreshed. */
  messageCount: number;
}

/** The sentence for a failed webhook call: the webhook wording where it has one, else the page's. */
function failureText(error: unknown): string {
  return (error instanceof ApiError ? webhookErrorText(error.code) : undefined) ?? errorText(error);
}

/** A delivery attempt's time, with seconds (attempts of one test are seconds apart). */
function attemptTime(iso: string): string {
  const date = new Date(iso);
  const time = date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  return date.toDateString() === new Date().toDateString() ? time : `${date.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })} ${time}`;
}

/**
 * The inbox's webhook (Premium): set it (URL, optional secret; the secret shown once), send a
 * test, remove it, and the last delivery attempts.
 */
export function WebhookSection({ username, email, messageCount }: WebhookSectionProps) {
  const [state, setState] = useState<WebhookState | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [editing, setEditing] = useState(false);
  const [url, setUrl] = useState('');
  const [secret, setSecret] = useState('');
  const [formError, setFormError] = useState<string | null>(null);
  const [actionError, setActionError] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const [revealed, setRevealed] = useState<string | null>(null);
  const [copied, setCopied] = useState(false);
  const [working, setWorking] = useState(false);
  // Answers for another inbox than the one on screen (the user switched meanwhile) are dropped.
  const shown = useRef(username);
  shown.current = username;
  const followUps = useRef(0);

  const load = async (): Promise<WebhookState | null> => {
    const asked = username;
    try {
      const answer = await api.webhook(asked);
      if (shown.current !== asked) return null;
      const next = { webhook: answer.webhook, deliveries: answer.deliveries };
      setState(next);
      setLoadError(null);
      return next;
    } catch (error) {
      if (shown.current === asked) setLoadError(failureText(error));
      return null;
    }
  };

  /**
   * Refreshes until a new attempt is listed (true), or FOLLOW_UP_TRIES looks have found none;
   * a newer follow-up, or another inbox, ends it (false).
   */
  const followUp = async (before: string): Promise<boolean> => {
    const run = (followUps.current += 1);
    const asked = username;
    for (let tries = 0; tries < FOLLOW_UP_TRIES; tries += 1) {
      await new Promise((done) => window.setTimeout(done, FOLLOW_UP_INTERVAL_MS));
      if (followUps.current !== run || shown.current !== asked) return false;
      const next = await load();
      if (next !== null && deliveriesFingerprint(next.deliveries) !== before) return true;
    }
    return false;
  };

  useEffect(() => {
    setState(null);
    setLoadError(null);
    setEditing(false);
    setFormError(null);
    setActionError(null);
    setStatus(null);
    setRevealed(null);
    followUps.current += 1;
    void load();
  }, [username]);

  // A new message means a delivery is on its way: list its attempt when it is made.
  const lastCount = useRef<{ username: string; count: number } | null>(null);
  useEffect(() => {
    const last = lastCount.current;
    lastCount.current = { username, count: messageCount };
    if (last === null || last.username !== username || messageCount <= last.count) return;
    if (state !== null && state.webhook !== null) void followUp(deliveriesFingerprint(state.deliveries));
  }, [username, messageCount]);

  const save = async (event: Event) => {
    event.preventDefault();
    const problem = webhookInputProblem(url, secret);
    setFormError(problem);
    if (problem !== null) return;
    setWorking(true);
    try {
      const { webhook } = await api.setWebhook(username, url.trim(), secret === '' ? undefined : secret);
      setRevealed(webhook.secret);
      setCopied(false);
      setEditing(false);
      setUrl('');
      setSecret('');
      setStatus(null);
      setActionError(null);
      setState((previous) => ({ webhook: { url: webhook.url, created_at: webhook.created_at }, deliveries: previous?.deliveries ?? [] }));
      void load();
    } catch (error) {
      setFormError(failureText(error));
    } finally {
      setWorking(false);
    }
  };

  const sendTest = async () => {
    setWorking(true);
    setActionError(null);
    const before = deliveriesFingerprint(state?.deliveries ?? []);
    try {
      await api.testWebhook(username);
      setStatus(TEST_SENT);
      // Once its attempt is listed the table says the rest.
      void followUp(before).then((listed) => listed && setStatus((now) => (now === TEST_SENT ? null : now)));
    } catch (error) {
      setActionError(failureText(error));
      void load();
    } finally {
      setWorking(false);
    }
  };

  const remove = async () => {
    setWorking(true);
    setActionError(null);
    try {
      await api.deleteWebhook(username);
      followUps.current += 1;
      setRevealed(null);
      setStatus('Webhook removed. Nothing more is sent to it.');
      setState({ webhook: null, deliveries: [] });
      void load();
    } catch (error) {
      setActionError(failureText(error));
    } finally {
      setWorking(false);
    }
  };

  const refresh = async () => {
    setActionError(null);
    await load();
  };

  const copySecret = async () => {
    if (revealed === null) return;
    const ok = await copyText(revealed);
    setCopied(ok);
    if (ok) window.setTimeout(() => setCopied(false), COPIED_MS);
  };

  const webhook = state?.webhook ?? null;
  const showForm = state !== null && (webhook === null || editing);
  return (
    <details class="panel premium webhook" data-testid="webhook">
      <summary>
        Webhook: {webhook === null ? (state === null ? 'send each message to your server' : 'off') : <span data-testid="webhook-summary-on">on</span>}
      </summary>
      <div class="webhook__body">
        <p class="premium__facts">
          Each message <strong>{email}</strong> receives is sent as JSON in a signed POST to your URL.
        </p>
        {state === null && loadError === null && <p class="hint">Loading…</p>}
        {loadError !== null && (
          <p class="field-error" role="alert">
            {loadError}{' '}
            <button type="button" class="button button--small" onClick={() => void refresh()}>Try again</button>
          </p>
        )}
        {revealed !== null && (
          <div class="webhook__secret" role="status" data-testid="webhook-secret">
            <p class="webhook__secret-label">Signing secret, shown only now: copy it into your receiver.</p>
            <div class="field-row">
              <code class="webhook__secret-value">{revealed}</code>
              <button type="button" class="button button--small" onClick={() => void copySecret()}>{copied ? 'Copied' : 'Copy secret'}</button>
              <button type="button" class="button button--small button--ghost" onClick={() => setRevealed(null)}>Done</button>
            </div>
          </div>
        )}
        {webhook !== null && (
          <div class="webhook__current">
            <p class="webhook__url" data-testid="webhook-url">
              Sending to <span class="webhook__url-value">{webhook.url}</span>
            </p>
            <div class="address-card__actions">
              <button type="button" class="button button--small" onClick={() => void sendTest()} disabled={working}>Send test</button>
              <button type="button" class="button button--small" onClick={() => void refresh()} disabled={working}>Refresh</button>
              {!editing && <button type="button" class="button button--small" onClick={() => setEditing(true)} disabled={working}>Change</button>}
              <button type="button" class="button button--small button--danger" onClick={() => void remove()} disabled={working}>Remove webhook</button>
            </div>
          </div>
        )}
        {actionError !== null && <p class="field-error" role="alert">{actionError}</p>}
        {status !== null && actionError === null && <p class="hint" role="status">{status}</p>}
        {showForm && (
          <form class="premium__form" onSubmit={(event) => void save(event)} noValidate>
            <label for="webhook-url">Webhook URL</label>
            <div class="field-row">
              <input
                id="webhook-url"
                name="webhook-url"
                type="url"
                autocomplete="off"
                spellcheck={false}
                placeholder="https://example.com/hooks/tempinbox"
                maxLength={URL_MAX_LENGTH}
                value={url}
                aria-invalid={formError !== null}
                aria-describedby={formError !== null ? 'webhook-error' : 'webhook-help'}
                onInput={(event) => setUrl((event.target as HTMLInputElement).value)}
              />
            </div>
            <label for="webhook-secret">Secret (optional)</label>
            <div class="field-row">
              <input
                id="webhook-secret"
                name="webhook-secret"
                type="text"
                autocomplete="off"
                spellcheck={false}
                placeholder="16 to 128 characters; empty: one is made for you"
                maxLength={SECRET_MAX_LENGTH + 1}
                value={secret}
                onInput={(event) => setSecret((event.target as HTMLInputElement).value)}
              />
              <button type="submit" class="button button--primary" disabled={working}>{webhook === null ? 'Save webhook' : 'Replace webhook'}</button>
              {editing && <button type="button" class="button button--ghost" onClick={() => { setEditing(false); setFormError(null); }}>Cancel</button>}
            </div>
            {formError !== null ? (
              <p id="webhook-error" class="field-error" role="alert">{formError}</p>
            ) : (
              <p id="webhook-help" class="hint">The secret signs every delivery (the Tempinbox-Signature header). It is shown once, after saving.</p>
            )}
          </form>
        )}
        {webhook !== null && <DeliveryList deliveries={state?.deliveries ?? []} />}
      </div>
    </details>
  );
}

function DeliveryList({ deliveries }: { deliveries: WebhookDelivery[] }) {
  if (deliveries.length === 0) return <p class="hint" data-testid="webhook-no-deliveries">No deliveries yet. Send a test, or a mail to this address.</p>;
  return (
    // The wrapper scrolls a table wider than a narrow screen instead of widening the page.
    <div class="webhook__scroll">
      <table class="webhook__deliveries" data-testid="webhook-deliveries">
        <caption class="webhook__caption">Last deliveries, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Time</th>
            <th scope="col">Event</th>
            <th scope="col">Attempt</th>
            <th scope="col">Result</th>
          </tr>
        </thead>
        <tbody>
          {deliveries.map((delivery) => {
            const outcome = deliveryOutcome(delivery);
            return (
              <tr key={`${delivery.id}:${delivery.attempt}`} data-testid="webhook-delivery">
                <td><time dateTime={delivery.at}>{attemptTime(delivery.at)}</time></td>
                <td>{deliveryKind(delivery)}</td>
                <td>{delivery.attempt} of 6</td>
                <td class={outcome.ok ? 'webhook__ok' : 'webhook__failed'}>{outcome.text}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
