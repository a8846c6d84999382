import type { MessageLink } from '@tempinbox/client';
import { safeLinks } from '../lib/safe-links.js';

/** Up to this many links the list is open at once: a sign-in mail's one link is the point of it. */
const OPEN_UP_TO = 3;

/** Props of LinkList. */
export interface LinkListProps {
  links: readonly MessageLink[] | undefined;
}

/**
 * The message's http(s) links, each with its words and where it really goes, opened in a new
 * tab without opener or referrer. Nothing when the message has none (or the server lists none).
 */
export function LinkList({ links }: LinkListProps) {
  const shown = safeLinks(links);
  if (shown.length === 0) return null;
  return (
    <details class="links" open={shown.length <= OPEN_UP_TO} data-testid="links">
      <summary>Links in this message ({shown.length})</summary>
      <ul role="list">
        {shown.map((link) => (
          <li key={link.href}>
            <a href={link.href} target="_blank" rel="noopener noreferrer" referrerpolicy="no-referrer" class="links__item">
              <span class="links__text">{link.text}</span>
              {link.text !== link.href && <span class="links__url">{link.href}</span>}
            </a>
          </li>
        ))}
      </ul>
    </details>
  );
}
