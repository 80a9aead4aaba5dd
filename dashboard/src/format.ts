import { currentLocale } from './i18n.js';

/** How many decimals a currency shows (CLDR, through Intl): 0 for XOF and XAF, 2 for GHS. */
function currencyDigits(currency: string): number {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    return 2;
  }
}

/**
 * An amount in hundredths of a currency (the order's), grouped for the language: `12 345,67 XOF` in
 * French, `12,345.67 XOF` in English; francs without decimals when there are no cents. A dash when
 * absent.
 */
export function money(cents: number | null | undefined, currency = 'XOF'): string {
  if (cents === null || cents === undefined) return '—';
  const digits = cents % 100 === 0 ? currencyDigits(currency) : 2;
  const format = new Intl.NumberFormat(currentLocale(), { minimumFractionDigits: digits, maximumFractionDigits: digits });
  return `${format.format(cents / 100)} ${currency}`;
}

/** A count or quantity, grouped for the language. */
export function num(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : new Intl.NumberFormat(currentLocale()).format(value);
}

/**
 * `d` in the words of `options` for the language, in UTC. French writes the first of a month as an
 * ordinal (`1er déc.`, then `2 déc.`), which the locale data leaves to the writer.
 */
function utcWords(d: Date, options: Intl.DateTimeFormatOptions): string {
  const locale = currentLocale();
  const parts = new Intl.DateTimeFormat(locale, { ...options, timeZone: 'UTC' }).formatToParts(d);
  const french = locale.startsWith('fr');
  return parts.map((part) => (french && part.type === 'day' && part.value === '1' ? '1er' : part.value)).join('');
}

/**
 * A date-time of the API in the language's words, in UTC as the API gives it (`22 Nov 2026, 10:00:00
 * UTC`, `22 nov. 2026, 10:00:00 UTC`).
 */
export function when(iso: string | null | undefined): string {
  if (iso === null || iso === undefined || iso === '') return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${utcWords(d, { dateStyle: 'medium', timeStyle: 'medium' })} UTC`;
}

/** A time of day in the browser's own time zone (the session's end). */
export function localTime(ms: number): string {
  return new Intl.DateTimeFormat(currentLocale(), { timeStyle: 'short' }).format(new Date(ms));
}

/** A calendar date of the API (`2026-11-26`) in the language's words, e.g. `26 nov. 2026`. */
export function day(date: string | null | undefined): string {
  if (date === null || date === undefined || date === '') return '—';
  const d = new Date(`${date}T00:00:00Z`);
  return Number.isNaN(d.getTime()) ? date : utcWords(d, { dateStyle: 'medium' });
}
