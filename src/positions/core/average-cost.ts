/**
 * The average-cost method, pure and exact (docs/positions.md, "How a position is computed").
 *
 * A position is a signed quantity and the signed cost of that quantity, in cents of the instrument's
 * currency: a buy adds `qty` shares at `qty x price`, a sell removes them. Fees are not part of the
 * cost (gross prices, as brokers' average entry prices are). The average cost is `cost / qty`.
 *
 * - A trade in the direction of the position (or from flat) adds its quantity and its gross amount:
 *   the average becomes the quantity-weighted mean of the prices.
 * - A trade against the position closes shares at the current average, which does not change: the
 *   cost of the shares closed, `cost x closed / qty`, rounded half up to the cent (exact when the
 *   position closes entirely), leaves the position, and the realised profit or loss is what the trade
 *   got for them less that cost: `(price - average) x closed` for a long position (a sell), and
 *   `(average - price) x closed` for a short one (a buy covering a sale beyond the holdings).
 * - What a trade takes beyond the position opens a position the other way at the trade's price.
 *
 * Every amount is a bigint: a quantity up to 1e9 times a price up to 1e12 cents passes 2^63. Because
 * the cost is kept in whole cents and a close removes its share rounded once, what stays in the cost
 * plus what was realised always adds up to exactly what was paid and received.
 */
export interface PositionAmounts {
  /** Signed: negative when more was sold than held. */
  readonly qty: bigint;
  /** The signed cost of `qty` (negative for a short position), in cents. */
  readonly cost_cents: bigint;
  readonly realised_pnl_cents: bigint;
}

export interface Trade {
  readonly side: 'buy' | 'sell';
  readonly qty: number;
  readonly price_cents: number;
}

export const FLAT: PositionAmounts = Object.freeze({ qty: 0n, cost_cents: 0n, realised_pnl_cents: 0n });

const abs = (n: bigint) => (n < 0n ? -n : n);
const sign = (n: bigint) => (n < 0n ? -1n : n > 0n ? 1n : 0n);

/** round_half_up(n / d) for n >= 0, d >= 1. */
function divRound(n: bigint, d: bigint): bigint {
  return (2n * n + d) / (2n * d);
}

/** The position after `trade`; the input is not modified. */
export function applyTrade(p: PositionAmounts, trade: Trade): PositionAmounts {
  if (!Number.isSafeInteger(trade.qty) || trade.qty < 1 || !Number.isSafeInteger(trade.price_cents) || trade.price_cents < 0) {
    throw new RangeError(`invalid trade ${trade.qty} @ ${trade.price_cents}`);
  }
  const delta = trade.side === 'buy' ? BigInt(trade.qty) : -BigInt(trade.qty);
  const price = BigInt(trade.price_cents);
  if (p.qty === 0n || sign(p.qty) === sign(delta)) {
    return { qty: p.qty + delta, cost_cents: p.cost_cents + delta * price, realised_pnl_cents: p.realised_pnl_cents };
  }
  const closed = abs(delta) < abs(p.qty) ? abs(delta) : abs(p.qty);
  const closedCost = closed === abs(p.qty) ? p.cost_cents : sign(p.cost_cents) * divRound(abs(p.cost_cents) * closed, abs(p.qty));
  // Long: received closed x price for shares that cost closedCost. Short: paid closed x price for
  // shares sold for -closedCost.
  const realised = sign(p.qty) * (closed * price) - closedCost;
  const remaining = p.qty + sign(delta) * closed;
  const opened = abs(delta) - closed;
  const after: PositionAmounts = {
    qty: remaining,
    cost_cents: p.cost_cents - closedCost,
    realised_pnl_cents: p.realised_pnl_cents + realised,
  };
  if (opened === 0n) return after;
  return { qty: sign(delta) * opened, cost_cents: sign(delta) * opened * price, realised_pnl_cents: after.realised_pnl_cents };
}

/** Applies trades in order (see applyTrade). */
export function applyTrades(p: PositionAmounts, trades: Iterable<Trade>): PositionAmounts {
  let out = p;
  for (const t of trades) out = applyTrade(out, t);
  return out;
}

/** The position a statement line declares: `qty` shares at an average cost of `average_cost_cents`. */
export function declared(qty: number, averageCostCents: number): PositionAmounts {
  return { qty: BigInt(qty), cost_cents: BigInt(qty) * BigInt(averageCostCents), realised_pnl_cents: 0n };
}

/** `cost / qty`, rounded half up to the cent (a short position's average sale price); null when flat. */
export function averageCostCents(p: PositionAmounts): bigint | null {
  if (p.qty === 0n) return null;
  return divRound(abs(p.cost_cents), abs(p.qty));
}

/** What the position is worth at `priceCents` (signed like `qty`) and its unrealised profit or loss against its cost. */
export function valuation(p: PositionAmounts, priceCents: number): { market_value_cents: bigint; unrealised_pnl_cents: bigint } {
  const market = p.qty * BigInt(priceCents);
  return { market_value_cents: market, unrealised_pnl_cents: market - p.cost_cents };
}
