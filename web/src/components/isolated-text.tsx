import { splitBidiControls } from '../lib/bidi-text.js';

/** Props of IsolatedText. */
export interface IsolatedTextProps {
  text: string;
  class?: string;
}

/**
 * Mail-derived text (a name, an address, a subject, a file name) in bidi isolation: a `<bdi>`
 * (`unicode-bidi: isolate`), so its direction neither takes from nor leaks into what is around
 * it, with each directional control shown as a small marker instead of acting
 * (`web/src/lib/bidi-text.ts`). Its title says what the marker stands for.
 */
export function IsolatedText({ text, class: className }: IsolatedTextProps) {
  return (
    <bdi class={className}>
      {splitBidiControls(text).map((part, index) =>
        part.kind === 'text' ? (
          part.text
        ) : (
          <span key={index} class="bidi-control" title={`${part.codePoint} ${part.name}: a direction control in the message, shown here instead of applied`}>
            {part.name}
          </span>
        ),
      )}
    </bdi>
  );
}
