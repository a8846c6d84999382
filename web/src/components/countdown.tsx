import { useEffect, useRef, useState } from 'preact/hooks';
import { formatRemaining, remainingInWords } from '../lib/format-time.js';

/** From two days left, the countdown shows days (formatRemaining) and the date. */
const LONG_MS = 2 * 86_400_000;

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
  // Premium retention is weeks: the date it is kept until says more than a ticking clock.
  const long = left >= LONG_MS;
  const until = new Date(end).toLocaleDateString(undefined, { dateStyle: 'medium' });
  return (
    <p class={`countdown${urgent ? ' countdown--urgent' : ''}`}>
      <span aria-hidden="true">{long ? `Kept until ${until}: ` : 'Expires in '}</span>
      <time dateTime={expiresAt} aria-hidden="true" data-testid="countdown">{formatRemaining(left)}</time>
      {long && <span aria-hidden="true"> left</span>}
      <span class="visually-hidden">{long ? `Kept until ${until}` : `Expires in about ${remainingInWords(left)}`}</span>
    </p>
  );
}
