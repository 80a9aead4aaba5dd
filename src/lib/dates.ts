/**
 * UTC calendar days written `YYYY-MM-DD`: validation and day arithmetic. Every day of the service
 * (snapshot days, exchange calendars, expiry and settlement dates) is a UTC day.
 */

export const DAY_MS = 86_400_000;

const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

/** True for a real calendar day written YYYY-MM-DD (2026-02-30 is not one). */
export function isCalendarDate(value: string): boolean {
  const m = DATE_PATTERN.exec(value);
  if (m === null) return false;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  // Date.UTC rolls day 30 of February into March; a round trip catches it. Years 0-99 are mapped
  // to 1900-1999 by Date.UTC, which the round trip rejects too.
  return new Date(ms).toISOString().slice(0, 10) === value;
}

/** Epoch milliseconds of `date` at 00:00:00.000Z. */
export function dayStartMs(date: string): number {
  return Date.parse(`${date}T00:00:00.000Z`);
}

/** The UTC day of an instant. */
export function dateOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export function addDays(date: string, days: number): string {
  return dateOf(dayStartMs(date) + days * DAY_MS);
}

/** Days from `from` to `to` (negative when `to` is earlier). */
export function daysBetween(from: string, to: string): number {
  return Math.round((dayStartMs(to) - dayStartMs(from)) / DAY_MS);
}
