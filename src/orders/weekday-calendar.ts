import type { TradingDays } from './core/trading-days.js';

/**
 * The interim trading calendar: every exchange opens Monday to Friday and closes at 15:00 UTC (the
 * BRVM's normal timetable), with no holidays. It stands in until the exchanges' published calendars
 * (holidays and shortened sessions included) are served by the markets module, which implements the
 * same TradingDays interface.
 */
export class WeekdayCalendar implements TradingDays {
  closeOf(_exchange: string, date: string): number | null {
    const day = parseDay(date);
    return isWeekday(day) ? day + CLOSE_MS : null;
  }

  addOpenDays(_exchange: string, date: string, n: number): string {
    if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`addOpenDays: n must be a positive integer, got ${n}`);
    let day = parseDay(date);
    for (let left = n; left > 0; ) {
      day += DAY_MS;
      if (isWeekday(day)) left--;
    }
    return new Date(day).toISOString().slice(0, 10);
  }
}

/** Settlement after the trade date, in open days of the exchange's calendar: T+3 on each exchange for now. */
export const INTERIM_SETTLEMENT_DAYS: Readonly<Record<string, number>> = Object.freeze({ BRVM: 3, BVMAC: 3, GSE: 3 });

const DAY_MS = 86_400_000;
const CLOSE_MS = 15 * 3_600_000;

function parseDay(date: string): number {
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(date) ? Date.parse(`${date}T00:00:00.000Z`) : Number.NaN;
  if (!Number.isFinite(ms)) throw new RangeError(`not a date (YYYY-MM-DD): ${date}`);
  return ms;
}

function isWeekday(dayMs: number): boolean {
  const weekday = new Date(dayMs).getUTCDay();
  return weekday !== 0 && weekday !== 6;
}
