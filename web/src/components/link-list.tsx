import type { MessageLink } from '@tempinbox/client';
import { safeLinks } from '../lib/safe-links.js';
import { IsolatedText } from './isolated-text.js';

/** Up to this many links the list is open at once: a sign-in mail's one link is the point of it. */
const OPEN_UP_TO = 3;

/** Props of LinkList. */
export interface LinkListProps {
  links: readonly MessageLink[] | undefined;
}

/**
 * The message's http(s) links, each with its words and where it really goes, opened in a new
 * tab without opener or referrer. A link into this app's own origin is shown as text, with a
 * word on why: a mail must never be one click from calling the API in the reader's session.
 * Nothing when the message has none (or the server lists none).
 */
export function LinkList({ links }: LinkListProps) {
  const shown = safeLinks(links, location.origin);
  if (shown.length === 0) return null;
  return (
    <details class="links" open={shown.length <= OPEN_UP_TO} data-testid="links">
      <summary>Links in this message ({shown.length})</summary>
      <ul role="list">
        {shown.map((link) =>
          link.own ? (
            <li key={link.href}>
              <div class="links__item links__item--inert" data-testid="own-origin-link">
                <IsolatedText class="links__text" text={link.text} />
                <IsolatedText class="links__url" text={link.href} />
                <span class="links__note">Points into tempinbox itself, so it is shown as text, not a link.</span>
              </div>
            </li>
          ) : (
            <li key={link.href}>
              <a href={link.href} target="_blank" rel="noopener noreferrer" referrerpolicy="no-referrer" class="links__item">
                <IsolatedText class="links__text" text={link.text} />
                {link.text !== link.href && <IsolatedText class="links__url" text={link.href} />}
              </a>
            </li>
          ),
        )}
      </ul>
    </details>
  );
}
