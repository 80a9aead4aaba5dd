import type { Exchange } from '../../partners/markets.js';
import type { TradingDays } from './trading-days.js';

/**
 * Settlement of executions (docs/post-trade.md). A trade of date T settles on the exchange's
 * `settlement_days`-th open day after T, counted on its calendar (weekends, holidays and closures
 * skipped; a shortened day counts). Pure.
 */

export const SETTLEMENT_STATUSES = ['pending', 'settled'] as const;
export type SettlementStatus = (typeof SETTLEMENT_STATUSES)[number];

/** The settlement date of a trade date (YYYY-MM-DD, UTC). */
export function settlementDate(
  calendar: Pick<TradingDays, 'addOpenDays'>,
  exchange: Exchange,
  tradeDate: string,
  settlementDays: number,
): string {
  return calendar.addOpenDays(exchange, tradeDate, settlementDays);
}

/**
 * `settled` from the settlement date on (00:00 UTC of that day, by the clock the order lives on),
 * `pending` before it. The status is computed, never stored: it moves when the clock passes the
 * date, and a holiday imported later moves a date that has not come yet.
 */
export function settlementStatus(settlement: string, today: string): SettlementStatus {
  return today >= settlement ? 'settled' : 'pending';
}
