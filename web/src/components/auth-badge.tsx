import type { SenderAuth } from '@tempinbox/client';
import { describeAuth } from '../lib/auth-verdict.js';

/** Props of AuthBadge. */
export interface AuthBadgeProps {
  auth: SenderAuth;
}

/**
 * The sender checks as one badge ("Signed by example.com ✓", "SPF failed ✗"); a click (or a
 * hover, through its title) explains each check in plain words. A disclosure, so no script.
 */
export function AuthBadge({ auth }: AuthBadgeProps) {
  const verdict = describeAuth(auth);
  return (
    <details class={`auth auth--${verdict.tone}`} data-testid="auth">
      <summary class="auth__badge" title={verdict.details.join('\n')}>{verdict.label}</summary>
      <ul class="auth__details">
        {verdict.details.map((line) => <li key={line}>{line}</li>)}
      </ul>
    </details>
  );
}
