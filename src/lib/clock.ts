/** The one source of time. Services take a Clock so that time-dependent rules are tested by moving it. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that moves only when told to; for tests and deterministic replays. */
export class ManualClock implements Clock {
  #ms: number;
  constructor(start: Date | string | number = '2026-11-22T10:00:00.000Z') {
    this.#ms = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.#ms);
  }
  advance(ms: number): void {
    this.#ms += ms;
  }
  set(at: Date | string | number): void {
    this.#ms = new Date(at).getTime();
  }
}

/** Date-time with milliseconds (orders, events, deliveries). */
export function isoMillis(d: Date | number): string {
  return new Date(d).toISOString();
}

/** Date-time in whole seconds (attestations, keys, revocation lists). */
export function isoSeconds(d: Date | number): string {
  return new Date(d).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The UTC calendar day of an instant, as YYYY-MM-DD. */
export function utcDay(d: Date | number): string {
  return new Date(d).toISOString().slice(0, 10);
}
