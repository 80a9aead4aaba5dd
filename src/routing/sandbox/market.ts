import type { OrderForPartner } from '../connector.js';

/**
 * The synthetic market of the sandbox partners (pure): a price for every instrument at every second,
 * and how an order's quantity is split into executions. Prices and plans are hashes of the
 * instrument, the order id and the time, so they are the same on every platform and every run.
 */

/** The synthetic market: price changes once a second, on a 10-minute cycle. */
export const PRICE_TICK_MS = 1000;
export const PRICE_PERIOD_MS = 600_000;
/** Orders of at least this quantity fill in 3 to 5 partial executions. */
export const LARGE_ORDER_QTY = 1000;
/** The first execution comes this long after acceptance; later ones 1 to 2 s apart (in 250 ms steps). */
export const FIRST_FILL_DELAY_MS = 1000;

/** Amplitudes in basis points of the reference price: wave +-80, noise +-20, so +-1% in all. */
const WAVE_BP = 80;
const NOISE_BP = 20;
const JITTER_BP = 10;
export const BAND_BP = 100;

/** FNV-1a, 32 bits: a stable seed from a string. */
export function seedOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** MurmurHash3's finaliser: integer-only, so identical on every platform. */
function mix32(x: number): number {
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

/** A 32-bit hash of a seed and a non-negative safe integer. */
export function hashAt(seed: number, n: number): number {
  const lo = n % 0x1_0000_0000;
  const hi = Math.floor(n / 0x1_0000_0000);
  return mix32(mix32(seed ^ lo) ^ mix32(hi + 0x9e3779b9));
}

/** An integer in [-amplitude, amplitude]. */
function spread(h: number, amplitude: number): number {
  return (h % (2 * amplitude + 1)) - amplitude;
}

/** The +-1% band around a reference price: prices never leave it. */
export function priceBand(referenceCents: number): { lo: number; hi: number } {
  const d = Math.floor((referenceCents * BAND_BP) / 10_000);
  return { lo: Math.max(1, referenceCents - d), hi: referenceCents + d };
}

/** What the instrument allows a price to be: a multiple of the tick, inside the exchange's band. */
export interface PriceGrid {
  readonly tick_size_cents: number;
  readonly price_limits: { readonly low_cents: number; readonly high_cents: number } | null;
}

/** Any price in cents, no band: the grid of an order handed over without one. */
export const ANY_PRICE: PriceGrid = Object.freeze({ tick_size_cents: 1, price_limits: null });

export function gridOf(order: Pick<OrderForPartner, 'tick_size_cents' | 'price_limits'>): PriceGrid {
  return { tick_size_cents: order.tick_size_cents ?? 1, price_limits: order.price_limits ?? null };
}

/**
 * The prices the synthetic market takes: within +-1% of the reference, inside the exchange's band,
 * on the tick grid (both ends rounded inwards). When no multiple of the tick lies in that range, the
 * one price is the grid's nearest to the reference inside the band.
 */
export function priceRange(referenceCents: number, grid: PriceGrid): { lo: number; hi: number } {
  const tick = grid.tick_size_cents;
  const band = grid.price_limits;
  const { lo, hi } = priceBand(referenceCents);
  const low = Math.ceil(Math.max(lo, band?.low_cents ?? 1, tick) / tick) * tick;
  const high = Math.floor(Math.min(hi, band?.high_cents ?? hi) / tick) * tick;
  if (low <= high) return { lo: low, hi: high };
  let p = Math.max(tick, Math.round(referenceCents / tick) * tick);
  if (band !== null) p = Math.min(band.high_cents, Math.max(band.low_cents, p));
  return { lo: p, hi: p };
}

function priceAtBp(referenceCents: number, bp: number, grid: PriceGrid): number {
  const { lo, hi } = priceRange(referenceCents, grid);
  const tick = grid.tick_size_cents;
  const p = Math.round((referenceCents + Math.round((referenceCents * bp) / 10_000)) / tick) * tick;
  return Math.min(hi, Math.max(lo, p));
}

/** The market's offset from the reference, in basis points, during the tick containing `atMs`. */
function marketBp(instrument: string, atMs: number): number {
  const seed = seedOf(instrument);
  const tick = Math.floor(atMs / PRICE_TICK_MS);
  const period = PRICE_PERIOD_MS / PRICE_TICK_MS;
  // A triangle wave (integer arithmetic, unlike Math.sin) whose phase differs per instrument.
  const p = (((tick + (hashAt(seed, 0x7068) % period)) % period) + period) % period;
  const wave = Math.floor((2 * WAVE_BP * Math.abs(2 * p - period)) / period) - WAVE_BP;
  return wave + spread(hashAt(seed ^ 0x6e6f6973, tick), NOISE_BP);
}

/**
 * The simulated market price of an instrument at a time, in cents: the reference price moved by a
 * 10-minute triangle wave of +-0.8% and a per-second noise of +-0.2%, kept within +-1% of the
 * reference and within the instrument's band, on its tick grid (`priceRange`). Limit orders fill when
 * this price crosses their limit. Exported so that tests and the documentation can say when a given
 * limit will fill.
 */
export function simulatedPriceCents(instrument: string, referenceCents: number, atMs: number, grid: PriceGrid = ANY_PRICE): number {
  return priceAtBp(referenceCents, marketBp(instrument, atMs), grid);
}

type PricedOrder = Pick<
  OrderForPartner,
  'instrument' | 'reference_price_cents' | 'side' | 'limit_price_cents' | 'tick_size_cents' | 'price_limits'
>;

/** Whether a limit order can execute against the market at `atMs` (a market order always can). */
export function crosses(order: PricedOrder, atMs: number): boolean {
  if (order.limit_price_cents === null) return true;
  const market = simulatedPriceCents(order.instrument, order.reference_price_cents, atMs, gridOf(order));
  return order.side === 'buy' ? market <= order.limit_price_cents : market >= order.limit_price_cents;
}

/**
 * The price of the order's execution number `tranche` at `atMs`: the market with the order's own
 * jitter (seeded by its id), inside the band, on the tick grid and never worse than the limit.
 */
export function executionPriceCents(order: PricedOrder & Pick<OrderForPartner, 'order_id'>, tranche: number, atMs: number): number {
  const jitter = spread(hashAt(seedOf(order.order_id), 300 + tranche), JITTER_BP);
  const bp = Math.max(-BAND_BP, Math.min(BAND_BP, marketBp(order.instrument, atMs) + jitter));
  const price = priceAtBp(order.reference_price_cents, bp, gridOf(order));
  if (order.limit_price_cents === null) return price;
  return order.side === 'buy' ? Math.min(price, order.limit_price_cents) : Math.max(price, order.limit_price_cents);
}

export interface Tranche {
  readonly qty: number;
  /** Earliest time after the previous execution (or acceptance, for the first). */
  readonly delayMs: number;
}

/**
 * How `qty` executes: a single execution below LARGE_ORDER_QTY; 3 to 5 executions of hash-weighted
 * sizes from it, the sizes and spacing drawn from the order's id.
 */
export function tranchesFor(orderId: string, qty: number): readonly Tranche[] {
  const seed = seedOf(orderId);
  if (qty < LARGE_ORDER_QTY) return [{ qty, delayMs: FIRST_FILL_DELAY_MS }];
  const n = 3 + (hashAt(seed, 1) % 3);
  const weights = Array.from({ length: n }, (_, i) => 2 + (hashAt(seed, 100 + i) % 4));
  const total = weights.reduce((a, b) => a + b, 0);
  const plan: Tranche[] = [];
  let given = 0;
  for (let i = 0; i < n; i++) {
    const part = i === n - 1 ? qty - given : Math.floor((qty * (weights[i] as number)) / total);
    given += part;
    plan.push({ qty: part, delayMs: i === 0 ? FIRST_FILL_DELAY_MS : 1000 + 250 * (hashAt(seed, 200 + i) % 5) });
  }
  return plan;
}
