import type { ErrorDetail } from '../lib/errors.js';

/** A clock's time lies in this range: the calendars and the instruments' rules mean nothing far outside it. */
export const FROZEN_TIME_MIN = Date.parse('2000-01-01T00:00:00.000Z');
export const FROZEN_TIME_MAX = Date.parse('2099-12-31T23:59:59.999Z');
/** How far one advance may move a clock: two years (731 days). */
export const MAX_ADVANCE_MS = 731 * 86_400_000;

/** The instant a clock is created at (`ms` is `value` parsed). */
export function checkFrozenTime(value: string, ms: number): ErrorDetail | null {
  if (Number.isNaN(ms) || ms < FROZEN_TIME_MIN || ms > FROZEN_TIME_MAX) {
    return { field: 'frozen_time', rule: 'range', value, message: 'frozen_time must be a date-time from 2000 to 2099' };
  }
  return null;
}

/** An advance from `current` to `target` (`value` parsed): forward only, by at most MAX_ADVANCE_MS. */
export function checkAdvance(value: string, current: number, target: number): ErrorDetail | null {
  const range = checkFrozenTime(value, target);
  if (range !== null) return range;
  if (target <= current)
    return {
      field: 'frozen_time',
      rule: 'after_current',
      value,
      message: `a clock only moves forward: frozen_time must be after ${new Date(current).toISOString()}`,
    };
  if (target - current > MAX_ADVANCE_MS)
    return { field: 'frozen_time', rule: 'max_advance', value, message: 'one advance moves a clock by at most 2 years' };
  return null;
}
