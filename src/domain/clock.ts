/** The source of "now" for every time-dependent rule, so tests can move time without sleeping. */
export interface Clock {
  now(): Date;
}

/** The real wall clock. */
export const systemClock: Clock = { now: () => new Date() };

/** A clock tests set and advance by hand. */
export class FakeClock implements Clock {
  private current: number;

  constructor(start: Date | number = Date.UTC(2026, 0, 1)) {
    this.current = typeof start === 'number' ? start : start.getTime();
  }

  now(): Date {
    return new Date(this.current);
  }

  /** Moves time forward by `ms` milliseconds. */
  advance(ms: number): void {
    this.current += ms;
  }

  /** Sets the time. */
  set(to: Date | number): void {
    this.current = typeof to === 'number' ? to : to.getTime();
  }
}
