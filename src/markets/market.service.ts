import { isoMillis, isoSeconds } from '../lib/clock.js';
import { notFound, validationError } from '../lib/errors.js';
import { addDays, daysBetween } from '../lib/dates.js';
import type { ExchangeCode, MarketCalendar } from './calendar.js';
import { EXCHANGES, EXCHANGE_INFO, isExchange, type ExchangeInfo } from './exchanges.js';
import type { CalendarDay, ExchangeClock } from './market.schemas.js';

/** The longest calendar one request returns, first and last day included. */
export const MAX_CALENDAR_DAYS = 366;
/** The days returned when `to` is not given, `from` included. */
export const DEFAULT_CALENDAR_DAYS = 31;
/** The last day a date YYYY-MM-DD can name: the default `to` stops there. */
const LAST_DATE = '9999-12-31';

export function listExchanges(): ExchangeInfo[] {
  return EXCHANGES.map((code) => EXCHANGE_INFO[code]);
}

/** The exchange of a path parameter; anything else is 404. */
export function exchangeOf(code: string): ExchangeCode {
  if (!isExchange(code)) throw notFound('Exchange', code);
  return code;
}

/** The days from `from` to `to` included, each with its phases; both dates already valid. */
export function calendarBetween(
  calendar: MarketCalendar,
  exchange: ExchangeCode,
  range: { from?: string; to?: string },
  today: string,
): CalendarDay[] {
  const from = range.from ?? today;
  const to = range.to ?? addDays(from, Math.min(DEFAULT_CALENDAR_DAYS - 1, daysBetween(from, LAST_DATE)));
  const days = daysBetween(from, to) + 1;
  if (days < 1) throw validationError([{ field: 'to', rule: 'not_before_from', value: to, message: `must not be before from (${from})` }]);
  if (days > MAX_CALENDAR_DAYS) {
    throw validationError([
      {
        field: 'to',
        rule: 'max_days',
        value: to,
        message: `at most ${MAX_CALENDAR_DAYS} days from ${from}, both included (asked ${days})`,
        max_days: MAX_CALENDAR_DAYS,
      },
    ]);
  }
  return Array.from({ length: days }, (_, i) => calendar.day(exchange, addDays(from, i)));
}

export function exchangeClock(calendar: MarketCalendar, exchange: ExchangeCode, nowMs: number): ExchangeClock {
  const phase = calendar.phaseAt(exchange, nowMs);
  const nextOpen = calendar.nextOpen(exchange, nowMs);
  const nextClose = calendar.nextClose(exchange, nowMs);
  return {
    exchange,
    timestamp: isoMillis(nowMs),
    phase,
    is_open: phase !== 'closed',
    next_open: nextOpen === null ? null : isoSeconds(nextOpen),
    next_close: nextClose === null ? null : isoSeconds(nextClose),
  };
}
