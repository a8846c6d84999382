import { useMemo } from 'preact/hooks';
import { prepareMailHtml } from '../lib/prepare-mail-html.js';

/**
 * The sandbox of the reading frame. No allow-scripts, allow-forms, allow-same-origin or
 * allow-top-navigation: nothing in the message can run, submit, read this page or move it.
 * allow-popups(+to-escape-sandbox) only lets a link the reader clicks open in a new tab as a
 * normal page; without scripts nothing can open one by itself.
 */
export const MAIL_SANDBOX = 'allow-popups allow-popups-to-escape-sandbox';

/** Props of MailFrame. */
export interface MailFrameProps {
  html: string;
  showRemote: boolean;
  title: string;
}

/** A message's HTML in a sandboxed srcdoc frame under its own CSP (see docs/web.md). */
export function MailFrame({ html, showRemote, title }: MailFrameProps) {
  const { srcdoc } = useMemo(() => prepareMailHtml(html, showRemote), [html, showRemote]);
  return (
    <iframe
      class="mail-frame"
      title={title}
      sandbox={MAIL_SANDBOX}
      srcdoc={srcdoc}
      referrerpolicy="no-referrer"
      loading="eager"
      data-testid="mail-frame"
    />
  );
}
