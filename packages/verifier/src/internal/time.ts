// Date-times in the formats are RFC 3339 §5.6 restricted to UTC with a trailing `Z`
// (docs/concepts.md). Signed documents use whole seconds.

const WHOLE_SECONDS = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z$/;
const WITH_FRACTION = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

export const DAY_MS = 86_400_000;

function utc(y: string, mo: string, d: string, h = '0', mi = '0', s = '0'): number | null {
  return utcFields(Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s));
}

function utcFields(year: number, month: number, day: number, hour: number, minute: number, second: number): number | null {
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  // Date.UTC would roll 31 April over to 1 May; a calendar-invalid date must not parse.
  if (day > daysInMonth(year, month)) return null;
  return Date.UTC(year, month - 1, day, hour, minute, second);
}

/** The value of the `n` ASCII digits of `text` from `at`, or -1 when one is not a digit. */
function digits(text: string, at: number, n: number): number {
  let value = 0;
  for (let i = at; i < at + n; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    value = value * 10 + d;
  }
  return value;
}

/**
 * `YYYY-MM-DDTHH:MM:SSZ` read character by character: the form of every instant in a signed
 * document, parsed several times per verification (a regular expression and six number
 * conversions cost more). Undefined when `text` is not exactly of that form.
 */
function parseWholeSeconds(text: string): number | null | undefined {
  if (
    text.length !== 20 ||
    text[4] !== '-' ||
    text[7] !== '-' ||
    text[10] !== 'T' ||
    text[13] !== ':' ||
    text[16] !== ':' ||
    text[19] !== 'Z'
  )
    return undefined;
  const year = digits(text, 0, 4),
    month = digits(text, 5, 2),
    day = digits(text, 8, 2);
  const hour = digits(text, 11, 2),
    minute = digits(text, 14, 2),
    second = digits(text, 17, 2);
  if (year < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return undefined;
  return utcFields(year, month, day, hour, minute, second);
}

/** Milliseconds since the epoch, or null. Fractions beyond milliseconds are truncated. */
export function parseDateTime(text: unknown, wholeSeconds: boolean): number | null {
  if (typeof text !== 'string') return null;
  const fast = parseWholeSeconds(text);
  if (fast !== undefined) return fast;
  const m = (wholeSeconds ? WHOLE_SECONDS : WITH_FRACTION).exec(text);
  if (m === null) return null;
  const ms = utc(m[1]!, m[2]!, m[3]!, m[4], m[5], m[6]);
  if (ms === null) return null;
  const fraction = m[7];
  return fraction === undefined ? ms : ms + Number(fraction.slice(0, 3).padEnd(3, '0'));
}

const WITH_OFFSET = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(?:Z|([+-])(\d{2}):(\d{2}))$/;

/**
 * An RFC 3339 §5.6 date-time with `Z` or a numeric offset (an instant given by a person, such as a
 * command's option), in milliseconds since the epoch, or null. A calendar-invalid date does not roll
 * over (31 April is null), and a time without an offset is null, never read in a local zone.
 */
export function parseInstant(text: unknown): number | null {
  if (typeof text !== 'string') return null;
  const m = WITH_OFFSET.exec(text);
  if (m === null) return null;
  const ms = utc(m[1]!, m[2]!, m[3]!, m[4], m[5], m[6]);
  if (ms === null || Number(m[9] ?? 0) > 23 || Number(m[10] ?? 0) > 59) return null;
  const offset = m[8] === undefined ? 0 : (m[8] === '-' ? -1 : 1) * (Number(m[9]) * 60 + Number(m[10])) * 60_000;
  return ms + Number((m[7] ?? '').slice(0, 3).padEnd(3, '0')) - offset;
}

/** A full-date (RFC 3339 §5.6), as the UTC midnight that starts it. */
export function parseDate(text: unknown): number | null {
  if (typeof text !== 'string') return null;
  const m = DATE.exec(text);
  return m === null ? null : utc(m[1]!, m[2]!, m[3]!);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
