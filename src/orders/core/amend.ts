import type { ErrorDetail } from '../../lib/errors.js';
import { AT_PAR, committedNotional, toFcfaCents, type CommittedOrderInput, type FcfaRate } from './caps.js';
import type { PendingRequest } from './lifecycle.js';
import type { OrderStatus } from './state-machine.js';

/** An order of the month as the cap reads it, with its pending amend if it has one. */
export interface CappedOrder extends CommittedOrderInput {
  readonly pending_request: PendingRequest | null;
  readonly amend_qty: number | null;
  readonly amend_limit_price_cents: number | null;
}

/**
 * What an order holds against its subject's cap, in cents of its own currency: `committedNotional`,
 * or, while an amend is pending, the larger of its amount as it is and as the amend would make it.
 * Holding the larger keeps room for an amend the partner may still confirm, so that orders placed
 * meanwhile cannot together take the subject over the cap.
 */
export function heldAgainstCap(order: CappedOrder): bigint {
  const now = committedNotional(order);
  if (order.pending_request !== 'pending_amend' || order.amend_qty === null) return now;
  const amended = committedNotional({ ...order, qty: order.amend_qty, limit_price_cents: order.amend_limit_price_cents });
  return amended > now ? amended : now;
}

/**
 * The sum of `heldAgainstCap` over a month's orders, each converted to FCFA at its own rate and
 * rounded up on its own (as `sumCommitted`): the used amount of the cap functions.
 */
export function sumHeld(orders: Iterable<CappedOrder>): bigint {
  let sum = 0n;
  for (const o of orders) sum += toFcfaCents(heldAgainstCap(o), o.fcfa_rate);
  return sum;
}

export interface AmendTarget {
  readonly status: OrderStatus;
  readonly side: 'buy' | 'sell';
  readonly qty: number;
  readonly filled_qty: number;
  readonly limit_price_cents: number | null;
}

/** Why an order cannot be amended at all (409), or null when it can. */
export function amendConflict(order: AmendTarget & { readonly pending_request: PendingRequest | null }): string | null {
  if (order.limit_price_cents === null) return 'a market order cannot be amended; only limit orders can';
  if (order.status !== 'routed' && order.status !== 'partially_filled')
    return `the order is ${order.status}; only a routed or partially filled order can be amended`;
  if (order.pending_request !== null)
    return `a ${order.pending_request === 'pending_cancel' ? 'cancel' : 'previous amend'} of the order is waiting for the partner's answer`;
  return null;
}

/**
 * The checks of an amend's new values that do not need the database: something changes, and the new
 * quantity stays above what has filled. Returns the details of the failed checks (422).
 */
export function checkAmendValues(order: AmendTarget, change: { qty?: number; limit_price_cents?: number }): ErrorDetail[] {
  const qty = change.qty ?? order.qty;
  const limit = change.limit_price_cents ?? order.limit_price_cents;
  const details: ErrorDetail[] = [];
  if (qty === order.qty && limit === order.limit_price_cents) {
    details.push({
      field: change.qty === undefined ? 'limit_price_cents' : 'qty',
      rule: 'unchanged',
      value: change.qty ?? change.limit_price_cents,
      message: 'the amend changes nothing: the order already has these values',
    });
  }
  if (qty <= order.filled_qty)
    details.push({
      field: 'qty',
      rule: 'above_filled',
      value: qty,
      message: `the new quantity must be above the ${order.filled_qty} already filled`,
    });
  return details;
}

/**
 * How much more an amend counts against the cap than the order does now (0 when not more), in cents
 * of FCFA at `rate`, the order's rate (AT_PAR: in cents of its own currency). Each amount is
 * converted and rounded up on its own, as the cap's sum counts it. Sells count nothing, and a market
 * order is never amended (`amendConflict`), so only a limit buy can add to the cap.
 */
export function capIncreaseCents(
  order: AmendTarget,
  change: { qty?: number; limit_price_cents?: number },
  rate: FcfaRate = AT_PAR,
): bigint {
  if (order.side === 'sell' || order.limit_price_cents === null) return 0n;
  const before = toFcfaCents(BigInt(order.qty) * BigInt(order.limit_price_cents), rate);
  const after = toFcfaCents(BigInt(change.qty ?? order.qty) * BigInt(change.limit_price_cents ?? order.limit_price_cents), rate);
  return after > before ? after - before : 0n;
}
