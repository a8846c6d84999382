import { useState } from 'preact/hooks';
import type { SessionInbox } from '@tempinbox/client';
import { copyText } from '../lib/copy-text.js';
import { Countdown } from './countdown.js';

/** Props of AddressCard. */
export interface AddressCardProps {
  inbox: SessionInbox;
  expired: boolean;
  premium: boolean;
  busy: boolean;
  onExpire: (username: string) => void;
  onNewAddress: () => void;
  onDiscard: (username: string) => void;
  announce: (text: string) => void;
}

/** The current address, large, with a one-click copy, the countdown and "New address". */
export function AddressCard({ inbox, expired, premium, busy, onExpire, onNewAddress, onDiscard, announce }: AddressCardProps) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    const ok = await copyText(inbox.email);
    setCopied(ok);
    announce(ok ? `Copied ${inbox.email}` : 'Could not copy: select the address and copy it by hand.');
    if (ok) window.setTimeout(() => setCopied(false), 2000);
  };
  return (
    <section class={`address-card${expired ? ' address-card--expired' : ''}`} aria-labelledby="address-label">
      <h2 id="address-label" class="address-card__label">{expired ? 'This address has expired' : 'Your temporary address'}</h2>
      <div class="address-card__row">
        <output class="address" id="address" data-testid="address" aria-labelledby="address-label">
          {/* A narrow screen breaks the line at the @, not inside a name. */}
          {inbox.username}<wbr />@{inbox.domain}
        </output>
        <button type="button" class="button button--primary" onClick={() => void copy()} disabled={expired} aria-describedby="address">
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
      {expired ? (
        <p class="expired-text" role="alert">
          It no longer receives mail and its messages are gone. Get a new address to keep going.
        </p>
      ) : (
        <Countdown expiresAt={inbox.expires_at} onExpire={() => onExpire(inbox.username)} />
      )}
      <div class="address-card__actions">
        <button type="button" class={`button${expired ? ' button--primary' : ''}`} onClick={onNewAddress} disabled={busy}>
          {premium ? 'New random address' : 'New address'}
        </button>
        {premium && (
          <button type="button" class="button button--danger" onClick={() => onDiscard(inbox.username)} disabled={busy}>
            Delete this inbox
          </button>
        )}
      </div>
      {!premium && !expired && (
        <p class="hint">"New address" throws this inbox and its mail away.</p>
      )}
    </section>
  );
}
