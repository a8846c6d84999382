import { useEffect, useState } from 'preact/hooks';
import { lifetimeInWords } from '../lib/format-time.js';
import { useTempInbox } from '../lib/use-temp-inbox.js';
import { AddressCard } from './address-card.js';
import { InboxSwitcher } from './inbox-switcher.js';
import { MessageList } from './message-list.js';
import { MessageView } from './message-view.js';
import { NoticeBar } from './notice-bar.js';
import { PremiumPanel } from './premium-panel.js';

/** The whole page: address, inbox, reader and Premium, over the public API. */
export function App() {
  const app = useTempInbox();
  const { phase, mode, inboxes, current, messages, loaded, expired, notice, announcement, busy, live, sessionLost } = app.state;
  const [selectedId, setSelectedId] = useState<string | null>(null);
  const selected = messages.find((message) => message.id === selectedId) ?? null;
  const unread = messages.filter((message) => !app.isSeen(message.id)).length;

  useEffect(() => setSelectedId(null), [current?.username]);
  useEffect(() => {
    document.title = unread > 0 ? `(${unread}) tempinbox` : 'tempinbox: a disposable e-mail address';
  }, [unread]);

  const open = (id: string) => {
    setSelectedId(id);
    app.markSeen(id);
  };
  // Closing the reader returns keyboard focus to the message it showed (on narrow screens the list comes back).
  const [returnFocusTo, setReturnFocusTo] = useState<string | null>(null);
  useEffect(() => {
    if (returnFocusTo === null) return;
    document.querySelector<HTMLElement>(`.message-item[data-id="${CSS.escape(returnFocusTo)}"]`)?.focus();
    setReturnFocusTo(null);
  }, [returnFocusTo]);
  const close = () => {
    setReturnFocusTo(selectedId);
    setSelectedId(null);
  };

  return (
    <div class="app">
      <a class="skip-link" href="#main">Skip to content</a>
      <header class="topbar">
        <span class="brand"><span class="brand__mark" aria-hidden="true" />tempinbox</span>
        {mode.premium && <span class="badge" data-testid="premium-badge">Premium</span>}
      </header>
      <main id="main" class="main" tabIndex={-1}>
        <div class="visually-hidden" aria-live="polite" aria-atomic="true" data-testid="announcer">{announcement}</div>
        {notice !== null && <NoticeBar notice={notice} onDismiss={app.dismissNotice} />}
        {phase === 'loading' && current === null && (
          <section class="address-card address-card--loading" aria-busy="true">
            <h2 class="address-card__label">Your temporary address</h2>
            <p class="address address--placeholder">Getting an address…</p>
          </section>
        )}
        {phase === 'failed' && current === null && (
          <section class="address-card" data-testid="failed">
            <h2 class="address-card__label">No address yet</h2>
            <p>The page tries again by itself.</p>
            <button type="button" class="button button--primary" onClick={() => void app.retry()}>Try again now</button>
          </section>
        )}
        {current !== null && sessionLost && (
          <section class="address-card" data-testid="session-lost">
            <h2 class="address-card__label">Your session has ended</h2>
            <p class="session-lost__text">
              This browser can no longer read <strong>{current.email}</strong>: its session was cleared or has expired.
              {mode.premium ? ' Enter your license key again after getting a new address to see your Premium inboxes.' : ''}
            </p>
            <button type="button" class="button button--primary" onClick={() => void app.retry()} disabled={phase === 'loading'}>Get a new address</button>
          </section>
        )}
        {current !== null && !sessionLost && (
          <>
            <AddressCard
              inbox={current}
              expired={expired}
              premium={mode.premium}
              busy={busy}
              onExpire={app.markExpired}
              onNewAddress={() => void app.newAddress()}
              onDiscard={(username) => void app.discardInbox(username)}
              announce={app.announce}
            />
            {mode.premium && <InboxSwitcher inboxes={inboxes} currentUsername={current.username} onSelect={app.select} />}
            <PremiumPanel
              mode={mode}
              inboxCount={inboxes.length}
              busy={busy}
              onRedeem={app.redeem}
              onCreate={app.createCustom}
              current={current}
              messageCount={messages.length}
            />
            {!expired && (
              <div class={`mailbox${messages.length === 0 ? ' mailbox--empty' : ''}${selected !== null ? ' mailbox--reading' : ''}`}>
                <MessageList
                  messages={messages}
                  loaded={loaded}
                  live={live}
                  address={current.email}
                  selectedId={selectedId}
                  isSeen={app.isSeen}
                  onOpen={open}
                  announce={app.announce}
                />
                {selected !== null ? (
                  <MessageView
                    message={selected}
                    busy={busy}
                    onDelete={(id) => {
                      setSelectedId(null);
                      void app.deleteMessage(id);
                    }}
                    onClose={close}
                    onLoadFull={app.loadFull}
                    announce={app.announce}
                  />
                ) : (
                  messages.length > 0 && <p class="reader-placeholder">Choose a message to read it.</p>
                )}
              </div>
            )}
          </>
        )}
      </main>
      <footer class="footer">
        <p>
          {mode.premium ? `Premium inboxes are kept ${lifetimeInWords(mode.limits.ttl)}.` : `Free addresses last ${lifetimeInWords(mode.limits.ttl)}.`} Mail is shown with scripts off and
          remote images blocked until you ask. Developers: the same service is a <a href="/api/openapi.json">JSON API</a>.
        </p>
      </footer>
    </div>
  );
}
