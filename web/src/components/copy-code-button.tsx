import { useState } from 'preact/hooks';
import { showBidiControls } from '../lib/bidi-text.js';
import { copyText } from '../lib/copy-text.js';
import { IsolatedText } from './isolated-text.js';

/** How long "Copied" stays on the button: long enough to see, short enough to copy again. */
const COPIED_MS = 2000;

/** Props of CopyCodeButton. */
export interface CopyCodeButtonProps {
  code: string;
  /** `large`: the code at the top of a message; `chip`: the code in a list row. */
  size: 'large' | 'chip';
  announce: (text: string) => void;
}

/** A one-time code that copies itself in one click; the code is the button's own text. */
export function CopyCodeButton({ code, size, announce }: CopyCodeButtonProps) {
  const [copied, setCopied] = useState(false);
  const copy = async (event: Event) => {
    event.stopPropagation();
    const ok = await copyText(code);
    setCopied(ok);
    announce(ok ? `Copied code ${showBidiControls(code)}` : 'Could not copy: select the code and copy it by hand.');
    if (ok) window.setTimeout(() => setCopied(false), COPIED_MS);
  };
  return (
    <button type="button" class={`code code--${size}`} onClick={(event) => void copy(event)} aria-label={`Copy code ${showBidiControls(code)}`} data-testid={size === 'large' ? 'code' : 'code-chip'}>
      <IsolatedText class="code__value" text={code} />
      <span class="code__action" aria-hidden="true">{copied ? 'Copied' : 'Copy'}</span>
    </button>
  );
}
