import type { Message } from '@tempinbox/client';
import type { LiveMode } from '../lib/inbox-reducer.js';
import { formatShortDate } from '../lib/format-time.js';
import { parseSender } from '../lib/parse-sender.js';
import { CopyCodeButton } from './copy-code-button.js';
import { IsolatedText } from './isolated-text.js';

/** Props of MessageList. */
export interface MessageListProps {
  messages: Message[];
  loaded: boolean;
  live: LiveMode;
  address: string;
  selectedId: string | null;
  isSeen: (id: string) => boolean;
  onOpen: (id: string) => void;
  announce: (text: string) => void;
}

/** The inbox: newest first, unread ones marked, a message's first code copyable from its row; an explanation while it is empty. */
export function MessageList({ messages, loaded, live, address, selectedId, isSeen, onOpen, announce }: MessageListProps) {
  const unread = messages.filter((message) => !isSeen(message.id)).length;
  return (
    <section class="inbox" aria-labelledby="inbox-heading" data-live={live}>
      <h2 id="inbox-heading" class="inbox__heading">
        Inbox {messages.length > 0 && <span class="inbox__count" data-testid="inbox-count">{messages.length} {messages.length === 1 ? 'message' : 'messages'}{unread > 0 ? `, ${unread} unread` : ''}</span>}
        {live === 'stream' && <span class="live" title="New mail appears the moment it arrives">Live</span>}
      </h2>
      {messages.length === 0 ? (
        <div class="empty" data-testid="empty-inbox">
          <span class="empty__pulse" aria-hidden="true" />
          <p class="empty__title">{loaded ? 'Waiting for mail' : 'Opening your inbox…'}</p>
          <p class="empty__text">
            Use <strong>{address}</strong> wherever you need an e-mail address. Messages appear here by
            themselves; there is no need to reload.
          </p>
        </div>
      ) : (
        <ul class="message-list" role="list">
          {messages.map((message) => {
            const sender = parseSender(message.from);
            const read = isSeen(message.id);
            const code = message.codes?.find((value) => typeof value === 'string' && value !== '');
            return (
              <li key={message.id} class="message-row">
                <button
                  type="button"
                  class={`message-item${read ? '' : ' message-item--unread'}`}
                  aria-current={message.id === selectedId ? 'true' : undefined}
                  onClick={() => onOpen(message.id)}
                  data-testid="message-item"
                  data-id={message.id}
                >
                  <span class="message-item__dot" aria-hidden="true" />
                  <IsolatedText class="message-item__from" text={sender.name} />
                  <time class="message-item__date" dateTime={message.date}>{formatShortDate(message.date)}</time>
                  <span class="message-item__subject">
                    {!read && <span class="visually-hidden">Unread: </span>}
                    <IsolatedText text={message.subject || '(no subject)'} />
                  </span>
                  <IsolatedText class="message-item__snippet" text={message.body.slice(0, 140)} />
                </button>
                {code !== undefined && <CopyCodeButton code={code} size="chip" announce={announce} />}
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
