/**
 * What the order lifecycle needs from an exchange's trading calendar: when a day's session closes
 * (day and good-till-date orders expire then) and how to count open days (settlement dates). Dates
 * are UTC calendar days, `YYYY-MM-DD`; instants are milliseconds since the epoch.
 */
export interface TradingDays {
  /** The instant the exchange's session closes on `date`, or null when the exchange does not open that day. */
  closeOf(exchange: string, date: string): number | null;
  /** The open day `n` open days after `date` (`n` >= 1), counting only days the exchange opens. */
  addOpenDays(exchange: string, date: string, n: number): string;
}
