import { isoMillis } from '../lib/clock.js';
import { currencyOfInstrument } from '../partners/markets.js';
import { averageFillPrice } from './core/fills.js';
import type { RequestRefusal } from './core/lifecycle.js';
import type { Order } from './order.schemas.js';
import type { OrderRow } from './order.table.js';

/** A partner's refusal of a cancel or an amend, as the Order's `last_refusal` shows it. */
export interface Refusal {
  readonly request: 'cancel' | 'amend';
  readonly reason: RequestRefusal;
  /** ISO 8601, UTC, milliseconds. */
  readonly refused_at: string;
}

/** The `last_refusal` member of an Order, from its column. */
export function refusalOf(column: string | null): Refusal | null {
  return column === null ? null : (JSON.parse(column) as Refusal);
}

/**
 * The API's view of a stored order: one mapping for every place that answers with an order or
 * records it in an event (the order routes, the use cases, the router applying a partner's report),
 * so that a response and the event of the same change carry the same body.
 */
export function toOrder(row: OrderRow): Order {
  return {
    id: row.id,
    status: row.status,
    rcpt_to: row.rcpt_to,
    kyc_attestation_id: row.kyc_attestation_id,
    instrument: row.instrument,
    currency: currencyOfInstrument(row.instrument),
    side: row.side,
    qty: row.qty,
    limit_price_cents: row.limit_price_cents,
    filled_qty: row.filled_qty,
    average_fill_price_cents: averageFillPrice(BigInt(row.fill_notional_cents), row.filled_qty),
    failure_reason: row.failure_reason as Order['failure_reason'],
    client_metadata: row.client_metadata === null ? null : (JSON.parse(row.client_metadata) as Order['client_metadata']),
    created_at: isoMillis(row.created_at),
    updated_at: isoMillis(row.updated_at),
    time_in_force: row.time_in_force,
    expire_date: row.expire_date,
    expires_at: row.expires_at === null ? null : isoMillis(row.expires_at),
    cancel_reason: row.cancel_reason,
    pending_request: row.pending_request,
    pending_changes:
      row.pending_request === 'pending_amend'
        ? { qty: row.amend_qty ?? row.qty, limit_price_cents: row.amend_limit_price_cents ?? row.limit_price_cents ?? 0 }
        : null,
    last_refusal: refusalOf(row.last_refusal),
    ...(row.test_clock_id === null || row.test_clock_id === undefined ? {} : { test_clock: row.test_clock_id }),
  };
}
