/**
 * The order lifecycle of docs/concepts.md (the order state machine). The table is data so that the HTTP
 * documentation, the router and the tests read the same thing; every status change of an order goes
 * through `assertTransition`, so an illegal move fails here rather than being stored.
 */
export const ORDER_STATUSES = ['created', 'routed', 'partially_filled', 'filled', 'failed', 'cancelled'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

/**
 * Allowed next statuses. `partially_filled -> partially_filled` is the one self-transition: each
 * further partial fill is a change of the order (new `filled_qty`) without a change of status.
 * `partially_filled` cannot fail: once something executed on the exchange, the order ends filled or
 * cancelled (the remainder), never failed.
 */
export const ORDER_TRANSITIONS: Readonly<Record<OrderStatus, readonly OrderStatus[]>> = Object.freeze({
  created: Object.freeze(['routed', 'failed', 'cancelled'] as const),
  routed: Object.freeze(['partially_filled', 'filled', 'failed', 'cancelled'] as const),
  partially_filled: Object.freeze(['partially_filled', 'filled', 'cancelled'] as const),
  filled: Object.freeze([] as const),
  failed: Object.freeze([] as const),
  cancelled: Object.freeze([] as const),
});

export const FINAL_STATUSES: readonly OrderStatus[] = Object.freeze(ORDER_STATUSES.filter((s) => ORDER_TRANSITIONS[s].length === 0));

export function isOrderStatus(value: unknown): value is OrderStatus {
  return typeof value === 'string' && (ORDER_STATUSES as readonly string[]).includes(value);
}

export function canTransition(from: OrderStatus, to: OrderStatus): boolean {
  return ORDER_TRANSITIONS[from].includes(to);
}

/** A final order never changes again (a cancel of it is 409 `conflict` at the HTTP edge). */
export function isFinal(status: OrderStatus): boolean {
  return ORDER_TRANSITIONS[status].length === 0;
}

/** Thrown by `assertTransition`; `code` is stable so callers can `switch (err.code)`. */
export class IllegalTransitionError extends Error {
  readonly code = 'illegal_transition' as const;
  readonly from: OrderStatus;
  readonly to: OrderStatus;
  constructor(from: OrderStatus, to: OrderStatus) {
    super(`Illegal order transition ${from} -> ${to}`);
    this.name = 'IllegalTransitionError';
    this.from = from;
    this.to = to;
  }
}

export function assertTransition(from: OrderStatus, to: OrderStatus): void {
  if (!canTransition(from, to)) throw new IllegalTransitionError(from, to);
}
