import { isoMillis, utcDay } from '../lib/clock.js';
import type { Fill } from './order.schemas.js';
import type { OrderFillTable } from './order.table.js';

/**
 * An integer for a JSON body: a number while it is exact, else a bigint (the serialiser writes its
 * digits), since `qty` times a price can pass 2^53.
 */
function jsonInteger(value: bigint): number {
  return (value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value) as number;
}

/**
 * The API's view of a stored fill. Fees are not charged yet (no fee schedule is configured), so
 * `fees` is empty and `net_cents` equals `gross_cents`; the sign rule (a buy pays gross plus fees,
 * a sell receives gross minus fees) is applied already so that fees slot in. `settlementDate` gives
 * the settlement day of a trade date.
 */
export function fillOf(row: OrderFillTable, side: 'buy' | 'sell', settlementDate: (tradeDate: string) => string): Fill {
  const gross = BigInt(row.fill_qty) * BigInt(row.fill_price_cents);
  const fees: Fill['fees'] = [];
  const feeTotal = fees.reduce((sum, fee) => sum + BigInt(fee.amount_cents), 0n);
  return {
    id: row.id,
    order_id: row.order_id,
    qty: row.fill_qty,
    price_cents: row.fill_price_cents,
    executed_at: isoMillis(row.executed_at),
    exchange_ref: row.exchange_ref,
    gross_cents: jsonInteger(gross),
    fees,
    net_cents: jsonInteger(side === 'buy' ? gross + feeTotal : gross - feeTotal),
    settlement_date: settlementDate(utcDay(row.executed_at)),
  };
}
