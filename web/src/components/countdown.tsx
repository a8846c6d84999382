import { useEffect, useRef, useState } from 'preact/hooks';
import { formatRemaining, remainingInWords } from '../lib/format-time.js';

/** Props of Countdown. */
export interface CountdownProps {
  expiresAt: string;
  onExpire: () => void;
}

/**
 * Live time left until `expiresAt`, ticking every second in its own component so the rest of
 * the page does not re-render each second. Screen readers get a rounded value, not every tick.
 */
export function Countdown({ expiresAt, onExpire }: CountdownProps) {
  const end = Date.parse(expiresAt);
  const [now, setNow] = useState(() => Date.now());
  const fired = useRef(false);
  useEffect(() => {
    fired.current = false;
    const timer = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(timer);
  }, [end]);
  const left = end - now;
  useEffect(() => {
    if (left <= 0 && !fired.current) {
      fired.current = true;
      onExpire();
    }
  }, [left, onExpire]);
  const urgent = left < 60_000;
  return (
    <p class={`countdown${urgent ? ' countdown--urgent' : ''}`}>
      <span aria-hidden="true">Expires in </span>
      <time dateTime={expiresAt} aria-hidden="true" data-testid="countdown">{formatRemaining(left)}</time>
      <span class="visually-hidden">Expires in about {remainingInWords(left)}</span>
    </p>
  );
}
