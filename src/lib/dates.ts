/**
 * UTC calendar days written `YYYY-MM-DD`: validation and day arithmetic. Every day of the service
 * (snapshot days, exchange calendars, expiry and settlement dates) is a UTC day. Also the check of
 * the RFC 3339 date-times the API accepts.
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

const DATE_TIME_PATTERN = /^((\d{4})-(\d{2})-(\d{2}))[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):?(\d{2}))$/;
/** The instants whose UTC date-time is written with a four-digit year. */
const FIRST_INSTANT = Date.parse('0000-01-01T00:00:00.000Z');
const LAST_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * Epoch milliseconds of an RFC 3339 date-time, or null when it is not one that a JavaScript Date
 * holds exactly: a leap second (23:59:60), hour 24, a day the calendar lacks (February 30), an
 * offset without its minutes, or an instant outside years 0000-9999 in UTC. Digits after the
 * milliseconds are dropped, as Date.parse does. Every date-time the service accepts passes here, so
 * that Date.parse gives the instant its fields name.
 */
export function parseDateTime(value: string): number | null {
  const m = DATE_TIME_PATTERN.exec(value);
  if (m === null) return null;
  const [year, month, day, hour, minute, second] = m.slice(2, 8).map(Number) as [number, number, number, number, number, number];
  const [offsetHours, offsetMinutes] = [Number(m[10] ?? 0), Number(m[11] ?? 0)];
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const monthDays = month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
  if (month < 1 || month > 12 || day < 1 || day > monthDays) return null;
  if (hour > 23 || minute > 59 || second > 59 || offsetHours > 23 || offsetMinutes > 59) return null;
  const millis = Number((m[8] ?? '').padEnd(3, '0').slice(0, 3));
  const offset = (m[9] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  const ms = dayStartMs(m[1] as string) + ((hour * 60 + minute) * 60 + second) * 1000 + millis - offset;
  if (ms < FIRST_INSTANT || ms > LAST_INSTANT || Date.parse(value) !== ms) return null;
  return ms;
}

/** True for a date-time the service accepts (see parseDateTime). */
export function isDateTime(value: string): boolean {
  return parseDateTime(value) !== null;
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
