import type { SessionInbox } from '@tempinbox/client';

/** Props of InboxSwitcher. */
export interface InboxSwitcherProps {
  inboxes: SessionInbox[];
  currentUsername: string | null;
  onSelect: (username: string) => void;
}

/** Premium: the session's inboxes (up to the license's maximum), one click to switch. */
export function InboxSwitcher({ inboxes, currentUsername, onSelect }: InboxSwitcherProps) {
  return (
    <nav class="switcher" aria-label="Your inboxes">
      <ul role="list">
        {inboxes.map((inbox) => (
          <li key={inbox.username}>
            <button
              type="button"
              class="switcher__item"
              aria-current={inbox.username === currentUsername ? 'true' : undefined}
              onClick={() => onSelect(inbox.username)}
              data-testid="switcher-item"
            >
              <span class="switcher__email">{inbox.email}</span>
              <span class="switcher__count">{inbox.count} {inbox.count === 1 ? 'message' : 'messages'}</span>
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}
