/**
 * What this browser remembers between visits, in localStorage: that it has had a session, and
 * which inbox it showed last. Storage may be unavailable (private modes); every reader copes.
 */

/** localStorage key of the inbox last shown, so a premium reader returns to it. */
const CURRENT_KEY = 'tempinbox.current';
/** localStorage flag: this browser has had a session, so ask for it before creating an inbox. */
const SESSION_KEY = 'tempinbox.session';

/** Whether this browser has had a session (the cookie itself is HttpOnly, out of the page's reach). */
export function hadSession(): boolean {
  try {
    return localStorage.getItem(SESSION_KEY) !== null;
  } catch {
    return true;
  }
}

/** Notes that this browser has a session now. */
export function rememberSession(): void {
  try {
    localStorage.setItem(SESSION_KEY, '1');
  } catch {
    // Without storage every visit asks for the session first: one more request, same result.
  }
}

/** The inbox this browser showed last, if any. */
export function storedCurrent(): string | null {
  try {
    return localStorage.getItem(CURRENT_KEY);
  } catch {
    return null;
  }
}

/** Remembers the inbox shown, so a premium reader returns to it. */
export function storeCurrent(username: string): void {
  try {
    localStorage.setItem(CURRENT_KEY, username);
  } catch {
    // Without storage the newest inbox is shown first: fine.
  }
}
