import type { KycLevel } from '../../kyc/levels.js';
import type { Rational } from '../../partners/core/decimal-rate.js';
import type { OrderStatus } from './state-machine.js';

/**
 * Monthly buy caps per KYC level (docs/concepts.md, "KYC levels and monthly caps"), in cents of
 * FCFA: 1 FCFA = 100 cents. Amounts are bigint because `qty` (to 1e9) times a price (to 1e12 cents)
 * does not fit a safe integer.
 */
/** null means unlimited (KYC3, qualified investor). */
export const MONTHLY_CAP_CENTS: Readonly<Record<KycLevel, bigint | null>> = Object.freeze({
  KYC1: 100_000n * 100n, // 100,000 FCFA
  KYC2: 5_000_000n * 100n, // 5,000,000 FCFA
  KYC3: null,
});

export function capCents(level: KycLevel): bigint | null {
  return MONTHLY_CAP_CENTS[level];
}

export type Side = 'buy' | 'sell';

/** Amounts below are in cents of the order's own currency until converted by `toFcfaCents`. */
export interface NotionalInput {
  readonly side: Side;
  readonly qty: number;
  /** null or undefined for a market order. */
  readonly limit_price_cents?: number | null;
  /**
   * What one unit of a market order counts at: its worst case, the upper limit of the instrument's
   * price band (see price-rules.ts). Used only for a market order.
   */
  readonly market_price_cents: number;
}

/**
 * What an order counts against the cap when it is placed: `qty` times the limit price, or times the
 * worst price of the band for a market order, so that no fill inside the band can take the subject
 * past the cap. Sells count 0: the cap limits money going in.
 */
export function orderNotionalCents(order: NotionalInput): bigint {
  if (order.side === 'sell') return 0n;
  const price = order.limit_price_cents ?? order.market_price_cents;
  return BigInt(order.qty) * BigInt(price);
}

/** FCFA per unit of a currency, as an exact fraction: 1/1 for XOF and XAF, which are at par. */
export type FcfaRate = Rational;
export const AT_PAR: FcfaRate = Object.freeze({ num: 1n, den: 1n });

/**
 * An amount in cents of a currency, in cents of FCFA at `rate`, rounded up to the next cent: a
 * converted amount never counts less against a cap than it is worth.
 */
export function toFcfaCents(amountCents: bigint, rate: FcfaRate): bigint {
  return (amountCents * rate.num + rate.den - 1n) / rate.den;
}

export interface PlacedOrderInput extends NotionalInput {
  readonly status: OrderStatus;
  /** Exact sum of `fill_qty * fill_price_cents` over the order's fills (see fills.ts). */
  readonly fill_notional_cents: bigint;
}

export interface CommittedOrderInput extends PlacedOrderInput {
  /** The order's currency in FCFA on the day it was placed. */
  readonly fcfa_rate: FcfaRate;
}

/**
 * What an existing order of the month still counts against the cap (docs/concepts.md: buy orders that
 * are not failed; for a cancelled order only what was filled):
 * - sell: 0;
 * - failed: 0 (nothing executed: `failed` is reachable only from `created` and `routed`);
 * - cancelled: the notional actually filled before the cancel (0 if none);
 * - any other status: the order's notional as placed (`orderNotionalCents`), even when filled at a
 *   different price, so that what was allowed at placement stays the amount held against the cap.
 *
 * For a market order the caller should pass the band's upper limit around the reference price
 * recorded when the order was placed, so that the committed amount does not move with later prices.
 * The amount is in cents of the order's currency.
 */
export function committedNotional(order: PlacedOrderInput): bigint {
  if (order.side === 'sell') return 0n;
  switch (order.status) {
    case 'failed':
      return 0n;
    case 'cancelled':
      return order.fill_notional_cents;
    case 'created':
    case 'routed':
    case 'partially_filled':
    case 'filled':
      return orderNotionalCents(order);
  }
}

/**
 * The sum of `committedNotional` over a month's orders, each converted to FCFA at its own rate and
 * rounded up on its own: the `usedCents` of the functions below.
 */
export function sumCommitted(orders: Iterable<CommittedOrderInput>): bigint {
  let sum = 0n;
  for (const o of orders) sum += toFcfaCents(committedNotional(o), o.fcfa_rate);
  return sum;
}

/** What the subject may still buy this month: never negative; null when unlimited. */
export function remainingAllowance(level: KycLevel, usedCents: bigint): bigint | null {
  const cap = capCents(level);
  if (cap === null) return null;
  return usedCents >= cap ? 0n : cap - usedCents;
}

export type CapCheck = { ok: true } | { ok: false; remaining_cents: bigint; cap_cents: bigint };

/**
 * Whether a new order fits: `usedCents + newOrderCents <= cap` (reaching the cap exactly is allowed).
 * An order that counts nothing (a sell) always passes, even when the month is already over the cap
 * (for instance after a level change), because sells never count.
 */
export function checkCap(level: KycLevel, usedCents: bigint, newOrderCents: bigint): CapCheck {
  const cap = capCents(level);
  if (cap === null || newOrderCents === 0n) return { ok: true };
  if (usedCents + newOrderCents <= cap) return { ok: true };
  return { ok: false, remaining_cents: remainingAllowance(level, usedCents) ?? 0n, cap_cents: cap };
}

/**
 * The calendar month (UTC) containing `date`, as the half-open interval [startMs, endMs): an order
 * counts when `startMs <= created_at < endMs`, the same convention as the `created_gte` and
 * `created_lt` filters.
 */
export function monthWindow(date: Date): { startMs: number; endMs: number } {
  const ms = date.getTime();
  if (!Number.isFinite(ms)) throw new RangeError('monthWindow: invalid date');
  const y = date.getUTCFullYear();
  const m = date.getUTCMonth();
  return { startMs: Date.UTC(y, m, 1), endMs: Date.UTC(y, m + 1, 1) };
}
