import type { Exchange } from '../../partners/markets.js';

/**
 * What the order lifecycle needs from an exchange's trading calendar (markets/calendar.ts, holidays
 * and shortened sessions included): when a day's session closes (day and good-till-date orders
 * expire then) and how to count open days (settlement dates). Dates are UTC calendar days,
 * `YYYY-MM-DD`; instants are milliseconds since the epoch.
 */
export interface TradingDays {
  /** The instant the exchange's session closes on `date`, or null when the exchange does not open that day. */
  closeOf(exchange: Exchange, date: string): number | null;
  /** The open day `n` open days after `date`, counting only days the exchange opens. */
  addOpenDays(exchange: Exchange, date: string, n: number): string;
}
