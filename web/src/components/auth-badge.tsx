import type { SenderAuth } from '@tempinbox/client';
import { describeAuth } from '../lib/auth-verdict.js';
import { showBidiControls } from '../lib/bidi-text.js';

/** Props of AuthBadge. */
export interface AuthBadgeProps {
  auth: SenderAuth;
}

/**
 * The sender checks as one badge ("Verified as example.com ✓", "SPF failed ✗"; the rules are
 * describeAuth's); a click (or a hover, through its title) explains each check in plain words.
 * A disclosure, so no script.
 */
export function AuthBadge({ auth }: AuthBadgeProps) {
  // Its domains come from the message's headers: plain text with any direction control shown.
  const { tone, label, details: lines } = describeAuth(auth);
  const details = lines.map(showBidiControls);
  return (
    <details class={`auth auth--${tone}`} data-testid="auth">
      <summary class="auth__badge" title={details.join('\n')}><bdi>{showBidiControls(label)}</bdi></summary>
      <ul class="auth__details">
        {details.map((line) => <li key={line}>{line}</li>)}
      </ul>
    </details>
  );
}
