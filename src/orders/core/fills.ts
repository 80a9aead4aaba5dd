import { assertTransition, type OrderStatus } from './state-machine.js';

/**
 * Pure application of execution reports to an order's fill state (docs/concepts.md:
 * `filled_qty` never decreases and never exceeds `qty`; `average_fill_price_cents` is the
 * quantity-weighted mean of the fills, rounded half up).
 *
 * The notional is a bigint because `qty` goes to 1e9 and a price to 1e12 cents: their product
 * (1e21) is far beyond Number.MAX_SAFE_INTEGER. Storing the exact sum of `fill_qty * fill_price`
 * (rather than the rounded average) keeps the average exact however many fills arrive.
 */
export interface FillState {
  readonly qty: number;
  readonly filled_qty: number;
  /** Sum over the fills applied so far of `fill_qty * fill_price_cents`. */
  readonly fill_notional_cents: bigint;
  readonly status: OrderStatus;
}

export interface Fill {
  readonly fill_qty: number;
  readonly fill_price_cents: number;
}

export type FillErrorCode =
  /** The fill would take `filled_qty` above `qty`. */
  | 'fill_exceeds_qty'
  /** `fill_qty` or `fill_price_cents` is not a positive safe integer. */
  | 'invalid_fill'
  /** The state itself breaks the invariants (a corrupt row): never silently repaired. */
  | 'invalid_fill_state';

export class FillError extends Error {
  readonly code: FillErrorCode;
  readonly state: FillState;
  readonly fill: Fill | undefined;
  constructor(code: FillErrorCode, message: string, state: FillState, fill?: Fill) {
    super(message);
    this.name = 'FillError';
    this.code = code;
    this.state = state;
    this.fill = fill;
  }
}

const isPositiveInt = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 1;

/** The fill state of a new order. */
export function initialFillState(qty: number, status: OrderStatus = 'created'): FillState {
  return { qty, filled_qty: 0, fill_notional_cents: 0n, status };
}

/**
 * Applies one execution (a `partial_fill` or `fill` report) and returns the new state; the input is
 * not modified. The new status is `filled` when `filled_qty` reaches `qty`, else `partially_filled`.
 *
 * Throws FillError (`invalid_fill`, `fill_exceeds_qty`, `invalid_fill_state`), or
 * IllegalTransitionError when the order cannot take a fill in its status (only `routed` and
 * `partially_filled` can: a fill of a `created`, `filled`, `failed` or `cancelled` order is refused).
 * Deduplication of reports is the router's job (by `report_id` and `seq`), not this function's: a
 * fill given twice is counted twice.
 */
export function applyFill(state: FillState, fill: Fill): FillState {
  assertFillState(state);
  if (!isPositiveInt(fill.fill_qty) || !isPositiveInt(fill.fill_price_cents)) {
    throw new FillError('invalid_fill', `Invalid fill ${fill.fill_qty} @ ${fill.fill_price_cents}`, state, fill);
  }
  const filled_qty = state.filled_qty + fill.fill_qty;
  if (filled_qty > state.qty) {
    throw new FillError(
      'fill_exceeds_qty',
      `Fill of ${fill.fill_qty} would bring filled_qty to ${filled_qty}, above qty ${state.qty}`,
      state,
      fill,
    );
  }
  const status: OrderStatus = filled_qty === state.qty ? 'filled' : 'partially_filled';
  assertTransition(state.status, status);
  return {
    qty: state.qty,
    filled_qty,
    fill_notional_cents: state.fill_notional_cents + BigInt(fill.fill_qty) * BigInt(fill.fill_price_cents),
    status,
  };
}

/** Applies several fills in order (same rules as `applyFill`). */
export function applyFills(state: FillState, fills: Iterable<Fill>): FillState {
  let s = state;
  for (const f of fills) s = applyFill(s, f);
  return s;
}

/**
 * The quantity-weighted mean fill price in cents, rounded half up, or null when nothing is filled
 * (the Order's `average_fill_price_cents` is "null until filled").
 *
 * Exact for any size: round_half_up(n / q) = floor((2n + q) / (2q)) for n >= 0, q >= 1, computed in
 * bigint. The result is at most the largest fill price, so it fits a safe integer.
 */
export function averageFillPrice(notional: bigint, filledQty: number): number | null {
  if (!Number.isSafeInteger(filledQty) || filledQty < 0) throw new RangeError(`filledQty must be a non-negative integer, got ${filledQty}`);
  if (notional < 0n) throw new RangeError(`notional must be non-negative, got ${notional}`);
  if (filledQty === 0) {
    if (notional !== 0n) throw new RangeError(`notional ${notional} with nothing filled`);
    return null;
  }
  const q = BigInt(filledQty);
  return Number((2n * notional + q) / (2n * q));
}

/** The average of a fill state, for serialising an Order. */
export function averageFillPriceOf(state: Pick<FillState, 'fill_notional_cents' | 'filled_qty'>): number | null {
  return averageFillPrice(state.fill_notional_cents, state.filled_qty);
}

function assertFillState(state: FillState): void {
  const ok =
    isPositiveInt(state.qty) &&
    Number.isSafeInteger(state.filled_qty) &&
    state.filled_qty >= 0 &&
    state.filled_qty <= state.qty &&
    typeof state.fill_notional_cents === 'bigint' &&
    state.fill_notional_cents >= 0n &&
    (state.filled_qty === 0) === (state.fill_notional_cents === 0n);
  if (!ok)
    throw new FillError(
      'invalid_fill_state',
      `Invalid fill state ${state.filled_qty}/${state.qty}, notional ${state.fill_notional_cents}`,
      state,
    );
}
