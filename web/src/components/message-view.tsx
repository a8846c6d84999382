import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { attachmentUrl, rawUrl } from '../api/api-client.js';
import type { Message } from '@tempinbox/client';
import { showBidiControls, withoutBidiControls } from '../lib/bidi-text.js';
import { formatLongDate, formatSize } from '../lib/format-time.js';
import { parseSender } from '../lib/parse-sender.js';
import { prepareMailHtml } from '../lib/prepare-mail-html.js';
import { AuthBadge } from './auth-badge.js';
import { CopyCodeButton } from './copy-code-button.js';
import { IsolatedText } from './isolated-text.js';
import { LinkList } from './link-list.js';
import { MailFrame } from './mail-frame.js';

/** Codes shown at the top: the most likely few; the server lists them most likely first. */
const MAX_CODES_SHOWN = 5;

/** Props of MessageView. */
export interface MessageViewProps {
  message: Message;
  busy: boolean;
  onDelete: (id: string) => void;
  onClose: () => void;
  /** Loads the whole message when the listing cut it (`truncated`). */
  onLoadFull: (id: string) => void;
  announce: (text: string) => void;
}

/**
 * One message: its codes (one click to copy), headers with the sender checks, the links, HTML
 * (sandboxed) or plain text, remote images on request, attachments, .eml, delete.
 */
export function MessageView({ message, busy, onDelete, onClose, onLoadFull, announce }: MessageViewProps) {
  const [view, setView] = useState<'html' | 'text'>(message.html === null ? 'text' : 'html');
  const [showRemote, setShowRemote] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  // A new message: back to the safe default, and focus its subject for keyboard and screen-reader users.
  useEffect(() => {
    setView(message.html === null ? 'text' : 'html');
    setShowRemote(false);
    heading.current?.focus();
  }, [message.id, message.html]);
  useEffect(() => {
    if (message.truncated === true) onLoadFull(message.id);
  }, [message.id, message.truncated, onLoadFull]);
  const blocked = useMemo(() => (message.html === null ? 0 : prepareMailHtml(message.html, false).blockedRemote), [message.html]);
  const sender = parseSender(message.from);
  const codes = [...new Set((message.codes ?? []).filter((code) => typeof code === 'string' && code !== ''))].slice(0, MAX_CODES_SHOWN);
  return (
    <article class="reader" aria-labelledby="reader-subject" data-testid="reader">
      <div class="reader__top">
        <button type="button" class="button button--ghost reader__back" onClick={onClose}>
          <span aria-hidden="true">←</span> Back to inbox
        </button>
      </div>
      <header class="reader__header">
        <h2 id="reader-subject" class="reader__subject" tabIndex={-1} ref={heading}><IsolatedText text={message.subject || '(no subject)'} /></h2>
        {codes.length > 0 && (
          <section class="codes" aria-label={codes.length === 1 ? 'Code in this message' : 'Codes in this message'}>
            <p class="codes__label">{codes.length === 1 ? 'Code' : 'Codes'} <span class="codes__hint">(click to copy)</span></p>
            <div class="codes__list">
              {codes.map((code, index) => <CopyCodeButton key={code} code={code} size={index === 0 ? 'large' : 'chip'} announce={announce} />)}
            </div>
          </section>
        )}
        <dl class="reader__meta">
          <dt>From</dt>
          <dd>
            {/* Each part isolated: a name can neither reorder nor hide the address after it. */}
            <IsolatedText class="reader__from-name" text={sender.name} />
            {sender.address !== sender.name && <span class="reader__from-address"> &lt;<IsolatedText text={sender.address} />&gt;</span>}
          </dd>
          {message.auth !== undefined && message.auth !== null && (
            <>
              <dt>Sender</dt>
              <dd><AuthBadge auth={message.auth} /></dd>
            </>
          )}
          <dt>To</dt>
          <dd><IsolatedText text={message.to} /></dd>
          {typeof message.recipient === 'string' && message.recipient !== '' && (
            <>
              <dt>Delivered to</dt>
              <dd data-testid="recipient"><IsolatedText text={message.recipient} /></dd>
            </>
          )}
          <dt>Received</dt>
          <dd><time dateTime={message.date}>{formatLongDate(message.date)}</time></dd>
        </dl>
      </header>
      <div class="reader__toolbar" role="toolbar" aria-label="Message actions">
        {message.html !== null && (
          <div class="segmented" role="group" aria-label="Show as">
            <button type="button" class="button" aria-pressed={view === 'html'} onClick={() => setView('html')}>Formatted</button>
            <button type="button" class="button" aria-pressed={view === 'text'} onClick={() => setView('text')}>Plain text</button>
          </div>
        )}
        <a class="button" href={rawUrl(message.id)} download={`${message.id}.eml`}>Download .eml</a>
        <button type="button" class="button button--danger" onClick={() => onDelete(message.id)} disabled={busy}>Delete</button>
      </div>
      <LinkList links={message.links} />
      {message.truncated === true && <p class="loading-full" role="status">Loading the whole message…</p>}
      {view === 'html' && blocked > 0 && (
        <div class={`images-bar${showRemote ? ' images-bar--shown' : ''}`} role="status">
          {showRemote ? (
            <span>Remote images are shown. The sender can now see that you opened this message.</span>
          ) : (
            <>
              <span>
                {blocked} remote {blocked === 1 ? 'image was' : 'images were'} blocked, so the sender cannot tell you opened this message.
              </span>
              <button type="button" class="button button--small" onClick={() => setShowRemote(true)}>Show images</button>
            </>
          )}
        </div>
      )}
      <div class="reader__body">
        {view === 'html' && message.html !== null ? (
          <MailFrame html={message.html} showRemote={showRemote} title={`Message: ${showBidiControls(message.subject || '(no subject)')}`} />
        ) : (
          <pre class="plain-text" data-testid="plain-text"><IsolatedText text={message.body || '(This message has no text.)'} /></pre>
        )}
      </div>
      {message.attachments.length > 0 && (
        <section class="attachments" aria-labelledby="attachments-heading">
          <h3 id="attachments-heading">Attachments ({message.attachments.length})</h3>
          <ul role="list">
            {message.attachments.map((attachment) => (
              <li key={attachment.id}>
                <a href={attachmentUrl(message.id, attachment.id)} download={withoutBidiControls(attachment.filename)} class="attachment">
                  <IsolatedText class="attachment__name" text={attachment.filename} />
                  <span class="attachment__meta"><IsolatedText text={attachment.content_type} />, {formatSize(attachment.size)}</span>
                </a>
              </li>
            ))}
          </ul>
        </section>
      )}
    </article>
  );
}
