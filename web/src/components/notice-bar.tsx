import type { Notice } from '../lib/inbox-reducer.js';

/** Props of NoticeBar. */
export interface NoticeBarProps {
  notice: Notice;
  onDismiss: () => void;
}

/** A sentence about what went wrong (or right); errors are announced at once. */
export function NoticeBar({ notice, onDismiss }: NoticeBarProps) {
  return (
    <div class={`notice notice--${notice.kind}`} role={notice.kind === 'error' ? 'alert' : 'status'} data-testid="notice">
      <p>{notice.text}</p>
      <button type="button" class="button button--ghost button--small" onClick={onDismiss} aria-label="Dismiss this message">
        <span aria-hidden="true">×</span>
      </button>
    </div>
  );
}
