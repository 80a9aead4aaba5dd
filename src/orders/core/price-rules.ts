import type { ErrorDetail } from '../../lib/errors.js';

/** What an instrument says about the prices and quantities of its orders. */
export interface TradingRules {
  /** The previous close, in cents of the instrument's currency. */
  readonly reference_price_cents: number;
  /** Prices are whole multiples of the tick. At least 1. */
  readonly tick_size_cents: number;
  /** Quantities are whole multiples of the lot. At least 1. */
  readonly lot_size: number;
  /** How far a price may stray from the reference, in basis points either side; null: no band. */
  readonly price_band_bps: number | null;
}

/**
 * The lowest and highest price an order may take: the band's bounds rounded inwards to the tick grid,
 * both on the grid and both allowed. Every price the band and the tick both allow lies between them.
 */
export interface PriceLimits {
  readonly low_cents: number;
  readonly high_cents: number;
}

const BPS = 10_000n;

/**
 * The band's bounds rounded inwards to the tick grid, so that a price at a limit is on the grid and
 * never beyond the band (the band itself is checked at its exact bounds, `insideBand`):
 *   low  = ceil(reference * (10000 - bps) / (10000 * tick)) * tick, and at least one tick;
 *   high = floor(reference * (10000 + bps) / (10000 * tick)) * tick.
 * Exact integer arithmetic (bigint): reference * 20000 can exceed 2^53. Null when there is no band.
 */
export function priceLimits(rules: Pick<TradingRules, 'reference_price_cents' | 'tick_size_cents' | 'price_band_bps'>): PriceLimits | null {
  if (rules.price_band_bps === null) return null;
  const reference = BigInt(rules.reference_price_cents);
  const tick = BigInt(rules.tick_size_cents);
  const bps = BigInt(rules.price_band_bps);
  const step = BPS * tick;
  const low = ((reference * (BPS - bps) + step - 1n) / step) * tick;
  const high = ((reference * (BPS + bps)) / step) * tick;
  return { low_cents: Number(low < tick ? tick : low), high_cents: Number(high) };
}

/**
 * Whether `price` lies inside the band at its exact bounds, both allowed:
 *   reference × (10000 − bps) ≤ price × 10000 ≤ reference × (10000 + bps),
 * in exact integer arithmetic (bigint), whether or not the bounds fall on the tick grid. True when
 * there is no band.
 */
export function insideBand(rules: Pick<TradingRules, 'reference_price_cents' | 'price_band_bps'>, price: number): boolean {
  if (rules.price_band_bps === null) return true;
  const { low, high } = exactBand(rules.reference_price_cents, rules.price_band_bps);
  const scaled = BigInt(price) * BPS;
  return scaled >= low && scaled <= high;
}

/** The band's exact bounds, in ten-thousandths of a cent. */
function exactBand(referenceCents: number, bps: number): { low: bigint; high: bigint } {
  const reference = BigInt(referenceCents);
  return { low: reference * (BPS - BigInt(bps)), high: reference * (BPS + BigInt(bps)) };
}

/** An amount in ten-thousandths of a cent, written in cents: `2358750`, `1433750.925`. */
function centsText(tenThousandths: bigint): string {
  const whole = tenThousandths / BPS;
  const fraction = tenThousandths % BPS;
  return fraction === 0n ? `${whole}` : `${whole}.${fraction.toString().padStart(4, '0').replace(/0+$/, '')}`;
}

/**
 * The price a market order counts at against a monthly cap: its worst case, the highest price the
 * band lets a buy execute at, which is also the highest limit an order may take (`high_cents` of
 * `priceLimits`: the band's upper bound rounded down to the tick). Null when the instrument has no
 * band, so that the worst case is unknown.
 */
export function marketWorstPriceCents(
  rules: Pick<TradingRules, 'reference_price_cents' | 'tick_size_cents' | 'price_band_bps'>,
): number | null {
  return priceLimits(rules)?.high_cents ?? null;
}

/**
 * The instrument's rules an order breaks, each as an error detail: `qty` not a multiple of the lot
 * (`lot_size`); a limit price off the tick grid (`tick_size`) or outside the band at its exact bounds
 * (`price_band`), each checked on its own: a price off the grid inside the band breaks only the tick.
 * The `price_band` detail carries `low_cents` and `high_cents`, the lowest and highest price an order
 * may take (`priceLimits`). A market order has no price to check. Every broken rule is reported, not
 * only the first.
 */
export function checkTradingRules(
  rules: TradingRules,
  order: { readonly qty: number; readonly limit_price_cents?: number | null | undefined },
): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  if (order.qty % rules.lot_size !== 0) {
    details.push({
      field: 'qty',
      rule: 'lot_size',
      value: order.qty,
      message: `qty must be a multiple of the lot size, ${rules.lot_size}`,
      lot_size: rules.lot_size,
    });
  }
  const limit = order.limit_price_cents;
  if (limit === undefined || limit === null) return details;
  if (limit % rules.tick_size_cents !== 0) {
    details.push({
      field: 'limit_price_cents',
      rule: 'tick_size',
      value: limit,
      message: `limit_price_cents must be a multiple of the tick size, ${rules.tick_size_cents} cents`,
      tick_size_cents: rules.tick_size_cents,
    });
  }
  const limits = priceLimits(rules);
  if (limits !== null && rules.price_band_bps !== null && !insideBand(rules, limit)) {
    const exact = exactBand(rules.reference_price_cents, rules.price_band_bps);
    details.push({
      field: 'limit_price_cents',
      rule: 'price_band',
      value: limit,
      message: `limit_price_cents must lie within the price band, ${rules.price_band_bps} basis points either side of the reference price ${rules.reference_price_cents}: from ${centsText(exact.low)} to ${centsText(exact.high)} cents; on the tick grid, from ${limits.low_cents} (low_cents) to ${limits.high_cents} (high_cents)`,
      low_cents: limits.low_cents,
      high_cents: limits.high_cents,
    });
  }
  return details;
}
