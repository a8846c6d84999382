import { describe, expect, it, vi } from 'vitest';
import { ClientGone } from './client-gone.js';

describe('ClientGone', () => {
  it('calls its listener once, when raised, and not after unlisten', () => {
    const gone = new ClientGone();
    const listener = vi.fn();
    gone.listen(listener);
    expect(gone.raised).toBe(false);
    gone.raise();
    gone.raise();
    expect(gone.raised).toBe(true);
    expect(listener).toHaveBeenCalledTimes(1);

    const other = new ClientGone();
    const forgotten = vi.fn();
    other.listen(forgotten);
    other.unlisten();
    other.raise();
    expect(forgotten).not.toHaveBeenCalled();
  });

  it('does not call a listener set after it was raised (the holder reads `raised` first)', () => {
    const gone = new ClientGone();
    gone.raise();
    const late = vi.fn();
    gone.listen(late);
    gone.raise();
    expect(late).not.toHaveBeenCalled();
    expect(gone.raised).toBe(true);
  });

  it('keeps one listener: a second replaces the first', () => {
    const gone = new ClientGone();
    const first = vi.fn();
    const second = vi.fn();
    gone.listen(first);
    gone.listen(second);
    gone.raise();
    expect(first).not.toHaveBeenCalled();
    expect(second).toHaveBeenCalledTimes(1);
  });
});
