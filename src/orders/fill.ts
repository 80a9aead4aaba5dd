import { isoMillis, utcDay } from '../lib/clock.js';
import { settlementStatus } from './core/settlement.js';
import type { FeeAmount, FeeType } from '../partners/core/fees.js';
import type { FeeScope } from '../partners/fee-schedule.table.js';
import type { Fill } from './order.schemas.js';
import type { OrderFillTable } from './order.table.js';

/**
 * An integer for a JSON body: a number while it is exact, else a bigint (the serialiser writes its
 * digits), since `qty` times a price can pass 2^53.
 */
export function jsonInteger(value: bigint): number {
  return (value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(value) : value) as number;
}

/** A schedule version a fill's fees came from, as the Fill shows it. */
export interface ScheduleUsed {
  scope: FeeScope;
  /** The partner's id, or the exchange's code. */
  id: string;
  effective_from: string;
}

/** A stored fill's fees, or none for a fill recorded before fees were charged. */
export function storedFees(column: string | null | undefined): FeeAmount[] {
  if (column === null || column === undefined) return [];
  return (JSON.parse(column) as { type: FeeType; amount_cents: string }[]).map((f) => ({
    type: f.type,
    amount_cents: BigInt(f.amount_cents),
  }));
}

export function storedSchedules(column: string | null | undefined): ScheduleUsed[] {
  return column === null || column === undefined ? [] : (JSON.parse(column) as ScheduleUsed[]);
}

/**
 * The API's view of a stored fill: the amounts fixed when it was applied (a fill recorded before
 * fees were charged shows none, and its net equals its gross), the settlement date from the
 * exchange's calendar as it is now, and the settlement status on `today` (YYYY-MM-DD: the service's
 * date, or the test clock's for an order on one).
 */
export function fillOf(row: OrderFillTable, side: 'buy' | 'sell', settlementDate: (tradeDate: string) => string, today: string): Fill {
  const gross =
    row.gross_cents === null || row.gross_cents === undefined
      ? BigInt(row.fill_qty) * BigInt(row.fill_price_cents)
      : BigInt(row.gross_cents);
  const fees = storedFees(row.fees);
  const feeTotal = fees.reduce((sum, fee) => sum + fee.amount_cents, 0n);
  const net =
    row.net_cents === null || row.net_cents === undefined ? (side === 'buy' ? gross + feeTotal : gross - feeTotal) : BigInt(row.net_cents);
  const settlement = settlementDate(utcDay(Number(row.executed_at)));
  return {
    id: row.id,
    order_id: row.order_id,
    qty: row.fill_qty,
    price_cents: row.fill_price_cents,
    executed_at: isoMillis(Number(row.executed_at)),
    exchange_ref: row.exchange_ref,
    gross_cents: jsonInteger(gross),
    fees: fees.map((f) => ({ type: f.type, amount_cents: jsonInteger(f.amount_cents) })),
    net_cents: jsonInteger(net),
    settlement_date: settlement,
    settlement_status: settlementStatus(settlement, today),
    fee_schedules: storedSchedules(row.fee_schedules),
  };
}
