import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { api, attachmentUrl, rawUrl } from '../api/api-client.js';
import type { Message } from '../api/api-types.js';
import { formatLongDate, formatSize } from '../lib/format-time.js';
import { parseSender } from '../lib/parse-sender.js';
import { prepareMailHtml } from '../lib/prepare-mail-html.js';
import { MailFrame } from './mail-frame.js';

/** Props of MessageView. */
export interface MessageViewProps {
  message: Message;
  busy: boolean;
  onDelete: (id: string) => void;
  onClose: () => void;
}

/** One message: headers, HTML (sandboxed) or plain text, remote images on request, attachments, .eml, delete. */
export function MessageView({ message, busy, onDelete, onClose }: MessageViewProps) {
  const [view, setView] = useState<'html' | 'text'>(message.html === null ? 'text' : 'html');
  const [showRemote, setShowRemote] = useState(false);
  const heading = useRef<HTMLHeadingElement>(null);
  // A new message: back to the safe default, and focus its subject for keyboard and screen-reader users.
  useEffect(() => {
    setView(message.html === null ? 'text' : 'html');
    setShowRemote(false);
    heading.current?.focus();
  }, [message.id, message.html]);
  // A listing cuts long bodies (docs/api.md, check): show the cut text until the whole message arrives.
  const [whole, setWhole] = useState<Message | null>(null);
  useEffect(() => {
    setWhole(null);
    if (message.truncated !== true) return;
    let current = true;
    api.message(message.id).then(
      (detail) => current && setWhole(detail),
      () => undefined, // keep showing the cut text
    );
    return () => {
      current = false;
    };
  }, [message.id, message.truncated]);
  const body = whole?.id === message.id ? whole.body : message.body;
  const html = whole?.id === message.id ? whole.html : message.html;
  const blocked = useMemo(() => (html === null ? 0 : prepareMailHtml(html, false).blockedRemote), [html]);
  const sender = parseSender(message.from);
  return (
    <article class="reader" aria-labelledby="reader-subject" data-testid="reader">
      <div class="reader__top">
        <button type="button" class="button button--ghost reader__back" onClick={onClose}>
          <span aria-hidden="true">←</span> Back to inbox
        </button>
      </div>
      <header class="reader__header">
        <h2 id="reader-subject" class="reader__subject" tabIndex={-1} ref={heading}>{message.subject || '(no subject)'}</h2>
        <dl class="reader__meta">
          <dt>From</dt>
          <dd>
            <span class="reader__from-name">{sender.name}</span>
            {sender.address !== sender.name && <span class="reader__from-address"> &lt;{sender.address}&gt;</span>}
          </dd>
          <dt>To</dt>
          <dd>{message.to}</dd>
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
        {view === 'html' && html !== null ? (
          <MailFrame html={html} showRemote={showRemote} title={`Message: ${message.subject || '(no subject)'}`} />
        ) : (
          <pre class="plain-text" data-testid="plain-text">{body || '(This message has no text.)'}</pre>
        )}
      </div>
      {message.attachments.length > 0 && (
        <section class="attachments" aria-labelledby="attachments-heading">
          <h3 id="attachments-heading">Attachments ({message.attachments.length})</h3>
          <ul role="list">
            {message.attachments.map((attachment) => (
              <li key={attachment.id}>
                <a href={attachmentUrl(message.id, attachment.id)} download={attachment.filename} class="attachment">
                  <span class="attachment__name">{attachment.filename}</span>
                  <span class="attachment__meta">{attachment.content_type}, {formatSize(attachment.size)}</span>
                </a>
              </li>
            ))}
          </ul>
        </section>
      )}
    </article>
  );
}
