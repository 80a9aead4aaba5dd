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

/** The lowest and highest price the band allows, both on the tick grid and both allowed. */
export interface PriceLimits {
  readonly low_cents: number;
  readonly high_cents: number;
}

const BPS = 10_000n;

/**
 * The band's limits, rounded inwards to the tick grid so that a price at a limit is on the grid and
 * never beyond the band:
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
 * The price a market order counts at against a monthly cap: its worst case, the band's upper limit
 * for a buy. Null when the instrument has no band, so that the worst case is unknown.
 */
export function marketWorstPriceCents(
  rules: Pick<TradingRules, 'reference_price_cents' | 'tick_size_cents' | 'price_band_bps'>,
): number | null {
  return priceLimits(rules)?.high_cents ?? null;
}

/**
 * The instrument's rules an order breaks, each as an error detail: `qty` not a multiple of the lot
 * (`lot_size`); a limit price off the tick grid (`tick_size`) or outside the band (`price_band`). A
 * market order has no price to check. Every broken rule is reported, not only the first.
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
  const band = priceLimits(rules);
  if (band !== null && (limit < band.low_cents || limit > band.high_cents)) {
    details.push({
      field: 'limit_price_cents',
      rule: 'price_band',
      value: limit,
      message: `limit_price_cents must lie within the price band, from ${band.low_cents} to ${band.high_cents} cents (${rules.price_band_bps} basis points either side of the reference price ${rules.reference_price_cents})`,
      low_cents: band.low_cents,
      high_cents: band.high_cents,
    });
  }
  return details;
}
