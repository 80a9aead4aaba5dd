import type { Capability } from '../markets.js';

/**
 * Fees of an execution, from fee schedules that are data (docs/post-trade.md). Pure: no I/O, no
 * floating point. Amounts are bigint cents of the order's currency, since `qty` (up to 1e9) times a
 * price (up to 1e12 cents) passes 2^53.
 *
 * The rule, for one order and one trade date: every component is a function of the order's
 * cumulative gross amount that day, and each fill is charged what that function adds:
 *
 *   component(G) = round(G x rate)                           for the exchange's components
 *   commission(G) = max(round(G x rate), minimum)            for G > 0
 *   tax(G) = round(rate x (sum of the taxed components at G))
 *   a fill's amount = component(G after the fill) - what the order's earlier fills of the day were charged
 *
 * So the order's fees of a day are exactly those of one execution of its whole quantity that day,
 * whatever the number of fills: the minimum commission is charged once per order and trade date
 * (its first fill pays it; later fills pay only the commission above it), and no rounding adds up
 * over fills. A fill is never charged a negative amount (a schedule replaced during the day could
 * otherwise ask for one): it is charged zero instead.
 */

/** The fee component types, in the order a fill lists them. */
export const FEE_TYPES = ['commission', 'exchange', 'depository', 'regulator', 'levy', 'tax'] as const;
export type FeeType = (typeof FEE_TYPES)[number];

/** The types an exchange's schedule may charge (the commission is the partner's; tax is its own member). */
export const EXCHANGE_FEE_TYPES = ['exchange', 'depository', 'regulator', 'levy'] as const;
export type ExchangeFeeType = (typeof EXCHANGE_FEE_TYPES)[number];

/** How an exact amount becomes a whole number of increments: half up (to nearest, .5 up), down, or up. */
export const ROUNDING_MODES = ['half_up', 'down', 'up'] as const;
export type RoundingMode = (typeof ROUNDING_MODES)[number];

/** A rate in basis points as an exact fraction (7.5 bps is 75/10 bps). */
export interface BpsRate {
  readonly num: bigint;
  readonly den: bigint;
}

export interface Rounding {
  readonly mode: RoundingMode;
  /** The amount is a whole multiple of this many cents (100: whole francs). */
  readonly increment_cents: bigint;
}

export interface RateComponent {
  readonly type: ExchangeFeeType;
  readonly rate: BpsRate;
  readonly rounding: Rounding;
  /** The instrument classes it applies to; null: every class. */
  readonly classes: readonly Capability[] | null;
}

export interface Commission {
  readonly rate: BpsRate;
  readonly minimum_cents: bigint;
  readonly rounding: Rounding;
}

export interface Tax {
  readonly rate: BpsRate;
  /** The component types whose amounts it is charged on. */
  readonly on: readonly FeeType[];
  readonly rounding: Rounding;
}

/** What a fill is priced with: the partner's commission, the exchange's components, and the tax. */
export interface FeeSchedule {
  /** null: the partner has no schedule in force (no commission is charged). */
  readonly commission: Commission | null;
  readonly components: readonly RateComponent[];
  /** null: no tax on fees. */
  readonly tax: Tax | null;
}

export interface FeeAmount {
  readonly type: FeeType;
  readonly amount_cents: bigint;
}

export interface FillAmounts {
  readonly gross_cents: bigint;
  readonly fees: readonly FeeAmount[];
  readonly net_cents: bigint;
}

const BPS = 10_000n;

/** The fraction a rate in basis points stands for, from its decimal text ("15", "7.5", "0.45"). */
export function bpsRate(text: string): BpsRate {
  const m = /^(0|[1-9][0-9]*)(?:\.([0-9]{1,4}))?$/.exec(text);
  if (m === null) throw new RangeError(`not a rate in basis points: ${text}`);
  const fraction = m[2] ?? '';
  return { num: BigInt((m[1] as string) + fraction), den: 10n ** BigInt(fraction.length) };
}

/**
 * `amount x rate` rounded to a whole number of increments by `mode`. For amount >= 0 and exact value
 * v = n / d (in increments): down = floor(v), up = ceil(v), half_up = floor(v + 1/2) = floor((2n + d) / 2d).
 */
export function applyRate(amount: bigint, rate: BpsRate, rounding: Rounding): bigint {
  if (amount < 0n) throw new RangeError(`amount must be non-negative, got ${amount}`);
  if (rounding.increment_cents < 1n) throw new RangeError(`increment must be at least 1 cent, got ${rounding.increment_cents}`);
  const n = amount * rate.num;
  const d = BPS * rate.den * rounding.increment_cents;
  let units: bigint;
  switch (rounding.mode) {
    case 'down':
      units = n / d;
      break;
    case 'up':
      units = (n + d - 1n) / d;
      break;
    case 'half_up':
      units = (2n * n + d) / (2n * d);
      break;
  }
  return units * rounding.increment_cents;
}

/** Each type's amount at the cumulative gross `g` (before subtracting what earlier fills paid). */
function cumulative(schedule: FeeSchedule, instrumentClass: Capability | null, g: bigint): Map<FeeType, bigint> {
  const due = new Map<FeeType, bigint>();
  if (schedule.commission !== null) {
    const c = schedule.commission;
    due.set('commission', g === 0n ? 0n : max(applyRate(g, c.rate, c.rounding), c.minimum_cents));
  }
  for (const component of schedule.components) {
    if (component.classes !== null && (instrumentClass === null || !component.classes.includes(instrumentClass))) continue;
    due.set(component.type, applyRate(g, component.rate, component.rounding));
  }
  if (schedule.tax !== null) {
    const t = schedule.tax;
    const base = t.on.reduce((sum, type) => sum + (due.get(type) ?? 0n), 0n);
    due.set('tax', applyRate(base, t.rate, t.rounding));
  }
  return due;
}

const max = (a: bigint, b: bigint): bigint => (a > b ? a : b);

/**
 * The amounts of one fill. `earlier` is what the same order's earlier fills of the same trade date
 * came to (their gross, and the fees each type was charged); `instrumentClass` selects the
 * components restricted to some classes (null: an instrument no longer in the catalogue, which only
 * the unrestricted components apply to).
 *
 * Preconditions: `qty` and `price_cents` are positive safe integers; `schedule` has at most one
 * component of each type for any class (the schedule files are checked for it).
 */
export function fillAmounts(input: {
  side: 'buy' | 'sell';
  qty: number;
  price_cents: number;
  instrumentClass: Capability | null;
  schedule: FeeSchedule;
  earlier: { gross_cents: bigint; fees: readonly FeeAmount[] };
}): FillAmounts {
  const { schedule, earlier } = input;
  if (!Number.isSafeInteger(input.qty) || input.qty < 1 || !Number.isSafeInteger(input.price_cents) || input.price_cents < 1) {
    throw new RangeError(`invalid fill ${input.qty} @ ${input.price_cents}`);
  }
  const gross = BigInt(input.qty) * BigInt(input.price_cents);
  const due = cumulative(schedule, input.instrumentClass, earlier.gross_cents + gross);
  const charged = new Map<FeeType, bigint>();
  for (const fee of earlier.fees) charged.set(fee.type, (charged.get(fee.type) ?? 0n) + fee.amount_cents);
  const fees: FeeAmount[] = [];
  for (const type of FEE_TYPES) {
    const total = due.get(type);
    if (total === undefined) continue;
    fees.push({ type, amount_cents: max(total - (charged.get(type) ?? 0n), 0n) });
  }
  const feeTotal = fees.reduce((sum, f) => sum + f.amount_cents, 0n);
  return { gross_cents: gross, fees, net_cents: input.side === 'buy' ? gross + feeTotal : gross - feeTotal };
}

/** Fees summed by type, in the order of FEE_TYPES (a contract note's totals). */
export function sumFees(lists: Iterable<readonly FeeAmount[]>): FeeAmount[] {
  const totals = new Map<FeeType, bigint>();
  for (const list of lists) for (const f of list) totals.set(f.type, (totals.get(f.type) ?? 0n) + f.amount_cents);
  return FEE_TYPES.filter((t) => totals.has(t)).map((type) => ({ type, amount_cents: totals.get(type) as bigint }));
}
