import { isoMillis } from '../../lib/clock.js';
import type { OrderId } from '../../lib/ids.js';
import { INSTRUMENT_CODE_PATTERN, exchangeOfInstrument } from '../../partners/markets.js';
import {
  ConnectorUnavailableError,
  type AcceptedReport,
  type CancelResult,
  type CancelledReport,
  type ExecutionReport,
  type OrderForPartner,
  type RejectReason,
  type RejectedReport,
  type ReportBatch,
  type SubmitResult,
} from '../connector.js';
import { WakeQueue } from './wake-queue.js';

/**
 * A simulated SGI for sandbox deployments: it takes orders, fills them against a synthetic market
 * price, rejects them on documented test values, and keeps a report log, as a partner's gateway would.
 *
 * Determinism: the simulator has no timer and no randomness. Every method takes the current time
 * (`nowMs`) from the caller, and first brings the market up to that time (`advance`): reports whose
 * time has come are appended to the log, in time order. Prices and fill plans are hashes of the
 * instrument, the order id and the time. So the same sequence of calls at the same times gives the
 * same reports, byte for byte, and tests run instantly with a ManualClock. Time that goes backwards
 * is read as "no time passed", so that the log stays in time order.
 *
 * State is in memory: the simulator stands for a remote system, and a restart is a partner that lost
 * its book (positions of the old log are then unknown, which the connector contract allows).
 */

// ---------------------------------------------------------------------------------------------
// Test values and behaviour, as data (docs/sandbox.md is written from SANDBOX_TEST_VALUES).

/** Quantities that trigger a fixed outcome, whatever the instrument and price. */
export const TEST_QTY = Object.freeze({
  SGI_REJECTED: 13,
  INSUFFICIENT_FUNDS: 402,
  INSTRUMENT_SUSPENDED: 451,
  UNAVAILABLE: 503,
  PARTIAL_THEN_REST: 7777,
});
/** Submits of a `qty` 503 order that throw ConnectorUnavailableError before one is accepted. */
export const UNAVAILABLE_ATTEMPTS = 2;
/** What a `qty` 7777 order fills before it rests: one fill of 1111 (7777 = 7 x 1111). */
export const PARTIAL_THEN_REST_FILL_QTY = 1111;
/** A buy with this limit, or a sell with the maximum limit, rests until cancelled. */
export const NEVER_FILL_BUY_LIMIT_CENTS = 1;
export const NEVER_FILL_SELL_LIMIT_CENTS = 1_000_000_000_000;

/** Orders of at least this quantity fill in 3 to 5 partial executions. */
export const LARGE_ORDER_QTY = 1000;
/** The first execution comes this long after acceptance; later ones 1 to 2 s apart (in 250 ms steps). */
export const FIRST_FILL_DELAY_MS = 1000;
/** A suspended instrument is refused by the exchange this long after the SGI accepted the order. */
export const EXCHANGE_REJECT_DELAY_MS = 1000;

/** The synthetic market: price changes once a second, on a 10-minute cycle. */
export const PRICE_TICK_MS = 1000;
export const PRICE_PERIOD_MS = 600_000;
/** Amplitudes in basis points of the reference price: wave +-80, noise +-20, so +-1% in all. */
const WAVE_BP = 80;
const NOISE_BP = 20;
const JITTER_BP = 10;
const BAND_BP = 100;

export interface SandboxTestValue {
  /** The field of the order that carries the value. */
  readonly trigger: 'qty' | 'instrument_status' | 'limit_price_cents';
  /** The value, as typed in an order. */
  readonly value: string;
  /** What the order becomes. */
  readonly outcome: string;
  /** The reports the partner produces, in order. */
  readonly reports: string;
  readonly description: string;
}

/**
 * The documented test values. When several apply, the first in this order wins: qty 503 (only for
 * the unavailable attempts; the accepted attempt then follows the rules below), a suspended
 * instrument or qty 451, qty 13, qty 402, then the resting limits; qty 7777 applies to an accepted
 * order. Any other order follows the normal behaviour (see `fillPlan` and `simulatedPriceCents`).
 */
export const SANDBOX_TEST_VALUES: readonly SandboxTestValue[] = Object.freeze([
  {
    trigger: 'qty',
    value: String(TEST_QTY.SGI_REJECTED),
    outcome: 'failed, failure_reason sgi_rejected',
    reports: 'rejected (sgi_rejected), at hand-over',
    description: 'The SGI refuses the order when it is handed over: the order never becomes routed.',
  },
  {
    trigger: 'qty',
    value: String(TEST_QTY.INSUFFICIENT_FUNDS),
    outcome: 'failed, failure_reason insufficient_funds',
    reports: 'rejected (insufficient_funds), at hand-over',
    description: 'The SGI refuses the order for lack of funds (or of securities, for a sell).',
  },
  {
    trigger: 'qty',
    value: String(TEST_QTY.INSTRUMENT_SUSPENDED),
    outcome: 'routed, then failed with failure_reason instrument_suspended',
    reports: `accepted; rejected (instrument_suspended) ${EXCHANGE_REJECT_DELAY_MS / 1000} s later`,
    description: 'The SGI accepts the order and the exchange refuses it: trading in the instrument is suspended.',
  },
  {
    trigger: 'instrument_status',
    value: 'suspended',
    outcome: 'routed, then failed with failure_reason instrument_suspended',
    reports: `accepted; rejected (instrument_suspended) ${EXCHANGE_REJECT_DELAY_MS / 1000} s later`,
    description: 'Any order on a suspended instrument of the catalogue (TRANS.BRVM, BRASC.BVMAC, SOLAR.GSE), whatever its quantity.',
  },
  {
    trigger: 'qty',
    value: String(TEST_QTY.UNAVAILABLE),
    outcome: `created, then routed on the ${ordinal(UNAVAILABLE_ATTEMPTS + 1)} hand-over; then fills as usual`,
    reports: `none for the first ${UNAVAILABLE_ATTEMPTS} attempts (connector unavailable); then accepted and a fill`,
    description: `The partner is unreachable for the first ${UNAVAILABLE_ATTEMPTS} hand-overs of the order, which exercises the router's retries.`,
  },
  {
    trigger: 'qty',
    value: String(TEST_QTY.PARTIAL_THEN_REST),
    outcome: `partially_filled (filled_qty ${PARTIAL_THEN_REST_FILL_QTY}) until cancelled; then cancelled, filled_qty still ${PARTIAL_THEN_REST_FILL_QTY}`,
    reports: `accepted; partial_fill of ${PARTIAL_THEN_REST_FILL_QTY} (as a limit order: when the price crosses); cancelled on cancel`,
    description: 'One partial execution, then the rest waits on the book forever: the way to get "cancelled with a partial fill".',
  },
  {
    trigger: 'limit_price_cents',
    value: `${NEVER_FILL_BUY_LIMIT_CENTS} (buy)`,
    outcome: 'routed, resting until cancelled',
    reports: 'accepted; cancelled on cancel',
    description: 'A buy limit of 1 cent never fills. The order must pass the price checks: only an instrument without a price band and with a 1-cent tick takes it (the synthetic funds and money-market bills).',
  },
  {
    trigger: 'limit_price_cents',
    value: `${NEVER_FILL_SELL_LIMIT_CENTS} (sell)`,
    outcome: 'routed, resting until cancelled',
    reports: 'accepted; cancelled on cancel',
    description: 'A sell at the largest allowed limit never fills. Like the 1-cent buy, only on an instrument without a price band.',
  },
]);

function ordinal(n: number): string {
  return n === 1 ? '1st' : n === 2 ? '2nd' : n === 3 ? '3rd' : `${n}th`;
}

// ---------------------------------------------------------------------------------------------
// The synthetic market (pure).

/** FNV-1a, 32 bits: a stable seed from a string. */
function seedOf(text: string): number {
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
function hashAt(seed: number, n: number): number {
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

// ---------------------------------------------------------------------------------------------
// The simulated SGI.

export interface SimulatorOptions {
  /** The partner's name; it prefixes report ids. */
  readonly name: string;
  /** Distinguishes this instance's log positions from another's (a restart); default `0`. */
  readonly epoch?: string;
}

export interface Tranche {
  readonly qty: number;
  /** Earliest time after the previous execution (or acceptance, for the first). */
  readonly delayMs: number;
}

type SimStatus = 'open' | 'filled' | 'rejected' | 'cancelled';

interface SimOrder {
  readonly order: OrderForPartner;
  readonly index: number;
  readonly plan: readonly Tranche[];
  /** Limit that can never be crossed: the order rests until cancelled. */
  readonly rests: boolean;
  readonly exchangeReject: { readonly atMs: number } | null;
  readonly submitResult: SubmitResult;
  status: SimStatus;
  nextSeq: number;
  cumQty: number;
  nextTranche: number;
  lastExecMs: number;
  /** For a limit order: the next time to test for a crossing of the current tranche. */
  scanFromMs: number;
  cancelReport: CancelledReport | null;
  /** The time it is queued for in the wake-up queue; null when it is not queued. */
  wakeAt: number | null;
}

type Pending =
  | { readonly kind: 'fill'; readonly atMs: number; readonly o: SimOrder; readonly qty: number; readonly priceCents: number }
  | { readonly kind: 'reject'; readonly atMs: number; readonly o: SimOrder; readonly reason: RejectReason };

const DEFAULT_BATCH = 500;
const MAX_QTY = 1_000_000_000;
const MAX_PRICE = 1_000_000_000_000;

export class SgiSimulator {
  readonly name: string;
  readonly #epoch: string;
  readonly #orders = new Map<string, SimOrder>();
  /**
   * The open orders that may still execute, by the earliest time they can (a resting order never
   * does until it is cancelled): advance() takes the due ones only, not every order ever submitted
   * nor every open one (walking those made each submission cost more than the last).
   */
  readonly #wakeups = new WakeQueue<SimOrder>();
  readonly #unavailableAttempts = new Map<string, number>();
  readonly #log: ExecutionReport[] = [];
  readonly #exchangeSeq = new Map<string, number>();
  #nowMs = Number.NEGATIVE_INFINITY;

  constructor(options: SimulatorOptions) {
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(options.name)) throw new TypeError(`invalid simulator name ${options.name}`);
    if (options.epoch !== undefined && !/^[A-Za-z0-9]{1,32}$/.test(options.epoch)) throw new TypeError(`invalid epoch ${options.epoch}`);
    this.name = options.name;
    this.#epoch = options.epoch ?? '0';
  }

  /**
   * Hands an order over at `nowMs`. Idempotent per order id: a repeated submit of an order already
   * taken returns the first result and adds nothing to the log.
   * Throws ConnectorUnavailableError (test value `qty` 503) and TypeError for a malformed order.
   */
  submit(order: OrderForPartner, nowMs: number): SubmitResult {
    const now = this.advance(nowMs);
    const known = this.#orders.get(order.order_id);
    if (known) return known.submitResult;
    assertOrder(order);

    if (order.qty === TEST_QTY.UNAVAILABLE) {
      const attempts = (this.#unavailableAttempts.get(order.order_id) ?? 0) + 1;
      this.#unavailableAttempts.set(order.order_id, attempts);
      if (attempts <= UNAVAILABLE_ATTEMPTS) {
        throw new ConnectorUnavailableError(this.name, `Sandbox partner ${this.name} is unavailable (test value qty ${TEST_QTY.UNAVAILABLE}, attempt ${attempts} of ${UNAVAILABLE_ATTEMPTS})`);
      }
    }

    const reason: RejectReason | null =
      order.qty === TEST_QTY.SGI_REJECTED ? 'sgi_rejected' : order.qty === TEST_QTY.INSUFFICIENT_FUNDS ? 'insufficient_funds' : null;
    const suspended = order.instrument_status === 'suspended' || order.qty === TEST_QTY.INSTRUMENT_SUSPENDED;
    const index = this.#orders.size;
    const base = { order, index, nextSeq: 1, cumQty: 0, nextTranche: 0, lastExecMs: now, scanFromMs: Number.NEGATIVE_INFINITY, cancelReport: null, wakeAt: null };

    if (reason !== null && !suspended) {
      const report = this.#append<RejectedReport>(base, { type: 'rejected', occurred_at: isoMillis(now), reason });
      const o: SimOrder = { ...base, nextSeq: 2, plan: [], rests: true, exchangeReject: null, submitResult: { status: 'rejected', report }, status: 'rejected' };
      this.#orders.set(order.order_id, o);
      return o.submitResult;
    }
    const accepted = this.#append<AcceptedReport>(base, { type: 'accepted', occurred_at: isoMillis(now) });
    const o: SimOrder = {
      ...base,
      nextSeq: 2,
      plan: suspended ? [] : fillPlan(order),
      rests: suspended || neverFills(order),
      exchangeReject: suspended ? { atMs: now + EXCHANGE_REJECT_DELAY_MS } : null,
      submitResult: { status: 'accepted', report: accepted },
      status: 'open',
    };
    this.#orders.set(order.order_id, o);
    this.#schedule(o);
    return o.submitResult;
  }

  /**
   * Cancels what remains of an order at `nowMs`: executions due before `nowMs` happen first. A
   * second cancel returns the same report.
   */
  cancel(orderId: OrderId, nowMs: number): CancelResult {
    const now = this.advance(nowMs);
    const o = this.#orders.get(orderId);
    if (!o) return { status: 'refused', reason: 'unknown_order' };
    switch (o.status) {
      case 'filled':
        return { status: 'refused', reason: 'already_filled' };
      case 'rejected':
        return { status: 'refused', reason: 'already_rejected' };
      case 'cancelled':
        return { status: 'cancelled', report: o.cancelReport as CancelledReport };
      case 'open': {
        const report = this.#append<CancelledReport>(o, {
          type: 'cancelled',
          occurred_at: isoMillis(now),
          cancelled_qty: o.order.qty - o.cumQty,
          cum_qty: o.cumQty,
        });
        o.nextSeq++;
        o.status = 'cancelled';
        o.cancelReport = report;
        o.wakeAt = null;
        return { status: 'cancelled', report };
      }
    }
  }

  /**
   * The log after `since`, at `nowMs` (see PartnerConnector.reports). Positions are
   * `<epoch>:<count of reports before it>`; one of another epoch, or malformed, reads as null.
   */
  reports(since: string | null, nowMs: number, options: { limit?: number } = {}): ReportBatch {
    this.advance(nowMs);
    const limit = options.limit ?? DEFAULT_BATCH;
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`limit must be a positive integer, got ${limit}`);
    const start = this.#parsePosition(since);
    const batch = this.#log.slice(start, start + limit);
    const end = start + batch.length;
    return { reports: batch, position: end === 0 ? null : `${this.#epoch}:${end}` };
  }

  /**
   * Brings the market up to `nowMs`: every execution and exchange rejection due at or before it is
   * appended to the log, in time order (ties: order of submission). Returns the simulator's time,
   * which never goes backwards.
   */
  advance(nowMs: number): number {
    if (!Number.isFinite(nowMs)) throw new RangeError(`invalid time ${nowMs}`);
    if (nowMs <= this.#nowMs) return this.#nowMs;
    this.#nowMs = nowMs;
    const due: Pending[] = [];
    while (this.#wakeups.peekAt() <= nowMs) {
      const { at, item: o } = this.#wakeups.pop()!;
      // An entry made stale by a cancel (or by a later schedule) is skipped.
      if (o.wakeAt !== at) continue;
      collectDue(o, nowMs, due);
      this.#schedule(o);
    }
    // Each order's events are already in time order; a stable sort keeps them so.
    due.sort((a, b) => a.atMs - b.atMs || a.o.index - b.o.index);
    for (const ev of due) {
      const o = ev.o;
      if (ev.kind === 'reject') {
        this.#append<RejectedReport>(o, { type: 'rejected', occurred_at: isoMillis(ev.atMs), reason: ev.reason });
      } else {
        const cum = o.cumQty + ev.qty;
        const at = isoMillis(ev.atMs);
        this.#append(o, {
          type: cum === o.order.qty ? 'fill' : 'partial_fill',
          occurred_at: at,
          fill_qty: ev.qty,
          fill_price_cents: ev.priceCents,
          cum_qty: cum,
          leaves_qty: o.order.qty - cum,
          exchange_ref: this.#exchangeRef(o.order.instrument, ev.atMs),
          executed_at: at,
        });
        o.cumQty = cum;
      }
      o.nextSeq++;
    }
    return nowMs;
  }

  /** Queues `o` for the earliest time it can next execute, if it can. */
  #schedule(o: SimOrder): void {
    o.wakeAt = wakeAt(o);
    if (o.wakeAt !== null) this.#wakeups.push(o.wakeAt, o);
  }

  /** Adds a report for `o` with its next `seq` (the caller then increments `o.nextSeq`). */
  #append<R extends ExecutionReport>(o: Pick<SimOrder, 'order' | 'nextSeq'>, body: DistributiveOmit<R, 'report_id' | 'order_id' | 'seq'>): R {
    const report = {
      report_id: `${this.name}:${o.order.order_id}:${o.nextSeq}`,
      order_id: o.order.order_id,
      seq: o.nextSeq,
      ...body,
    } as unknown as R;
    Object.freeze(report);
    this.#log.push(report);
    return report;
  }

  /** `<EXCHANGE>-<YYYYMMDD>-<6 digits>`, numbered per exchange and UTC day. */
  #exchangeRef(instrument: string, atMs: number): string {
    const exchange = exchangeOfInstrument(instrument);
    const day = isoMillis(atMs).slice(0, 10).replace(/-/g, '');
    const key = `${exchange}-${day}`;
    const n = (this.#exchangeSeq.get(key) ?? 0) + 1;
    this.#exchangeSeq.set(key, n);
    return `${key}-${String(n).padStart(6, '0')}`;
  }

  #parsePosition(position: string | null): number {
    if (position === null) return 0;
    const m = /^([A-Za-z0-9]+):(\d{1,15})$/.exec(position);
    if (!m || m[1] !== this.#epoch) return 0;
    const n = Number(m[2]);
    return n <= this.#log.length ? n : 0;
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

function assertOrder(order: OrderForPartner): void {
  const int = (n: unknown, max: number) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 1 && n <= max;
  const problems: string[] = [];
  if (!new RegExp(INSTRUMENT_CODE_PATTERN).test(order.instrument)) problems.push('instrument');
  if (order.side !== 'buy' && order.side !== 'sell') problems.push('side');
  if (!int(order.qty, MAX_QTY)) problems.push('qty');
  if (order.limit_price_cents !== null && !int(order.limit_price_cents, MAX_PRICE)) problems.push('limit_price_cents');
  if (!int(order.reference_price_cents, MAX_PRICE)) problems.push('reference_price_cents');
  if (order.instrument_status !== 'active' && order.instrument_status !== 'suspended') problems.push('instrument_status');
  if (order.tick_size_cents !== undefined && !int(order.tick_size_cents, MAX_PRICE)) problems.push('tick_size_cents');
  const band = order.price_limits;
  if (band !== undefined && band !== null && !(int(band.low_cents, 2 * MAX_PRICE) && int(band.high_cents, 2 * MAX_PRICE) && band.low_cents <= band.high_cents)) problems.push('price_limits');
  if (problems.length > 0) throw new TypeError(`malformed order ${order.order_id}: ${problems.join(', ')}`);
}

/** A limit the synthetic price can never cross (it stays in `priceRange`). */
function neverFills(order: OrderForPartner): boolean {
  const limit = order.limit_price_cents;
  if (limit === null) return false;
  const { lo, hi } = priceRange(order.reference_price_cents, gridOf(order));
  if (order.side === 'buy') return limit === NEVER_FILL_BUY_LIMIT_CENTS || limit < lo;
  return limit === NEVER_FILL_SELL_LIMIT_CENTS || limit > hi;
}

/**
 * How an accepted order executes: a single execution below LARGE_ORDER_QTY; 3 to 5 executions of
 * hash-weighted sizes from it; one execution of 1111 then nothing for the test value 7777.
 */
export function fillPlan(order: Pick<OrderForPartner, 'order_id' | 'qty'>): readonly Tranche[] {
  const seed = seedOf(order.order_id);
  if (order.qty === TEST_QTY.PARTIAL_THEN_REST) return [{ qty: PARTIAL_THEN_REST_FILL_QTY, delayMs: FIRST_FILL_DELAY_MS }];
  if (order.qty < LARGE_ORDER_QTY) return [{ qty: order.qty, delayMs: FIRST_FILL_DELAY_MS }];
  const n = 3 + (hashAt(seed, 1) % 3);
  const weights = Array.from({ length: n }, (_, i) => 2 + (hashAt(seed, 100 + i) % 4));
  const total = weights.reduce((a, b) => a + b, 0);
  const plan: Tranche[] = [];
  let given = 0;
  for (let i = 0; i < n; i++) {
    const qty = i === n - 1 ? order.qty - given : Math.floor((order.qty * (weights[i] as number)) / total);
    given += qty;
    plan.push({ qty, delayMs: i === 0 ? FIRST_FILL_DELAY_MS : 1000 + 250 * (hashAt(seed, 200 + i) % 5) });
  }
  return plan;
}

/**
 * The earliest time `o` can next execute: its exchange rejection, or its next tranche's earliest
 * time (for a limit order, no sooner than where its price scan stopped); null when it cannot (it is
 * final, it rests, or its plan is done). collectDue finds nothing before this time.
 */
function wakeAt(o: SimOrder): number | null {
  if (o.status !== 'open') return null;
  if (o.exchangeReject !== null) return o.exchangeReject.atMs;
  if (o.rests) return null;
  const tranche = o.plan[o.nextTranche];
  if (tranche === undefined) return null;
  const earliest = o.lastExecMs + tranche.delayMs;
  return o.order.limit_price_cents === null ? earliest : Math.max(earliest, o.scanFromMs);
}

/** Appends to `out` the events of `o` due at or before `nowMs`, and moves `o` past them. */
function collectDue(o: SimOrder, nowMs: number, out: Pending[]): void {
  if (o.exchangeReject) {
    if (o.exchangeReject.atMs <= nowMs) {
      out.push({ kind: 'reject', atMs: o.exchangeReject.atMs, o, reason: 'instrument_suspended' });
      o.status = 'rejected';
    }
    return;
  }
  if (o.rests) return;
  const { order } = o;
  const seed = seedOf(order.order_id);
  const grid = gridOf(order);
  let cum = o.cumQty;
  while (o.nextTranche < o.plan.length) {
    const tranche = o.plan[o.nextTranche] as Tranche;
    const earliest = o.lastExecMs + tranche.delayMs;
    let at: number | null = null;
    if (order.limit_price_cents === null) {
      if (earliest <= nowMs) at = earliest;
    } else {
      // Test the price once per tick from `earliest`; resume where the last call stopped.
      let t = Math.max(earliest, o.scanFromMs);
      for (; t <= nowMs; t += PRICE_TICK_MS) {
        const market = simulatedPriceCents(order.instrument, order.reference_price_cents, t, grid);
        if (order.side === 'buy' ? market <= order.limit_price_cents : market >= order.limit_price_cents) {
          at = t;
          break;
        }
      }
      if (at === null) o.scanFromMs = t;
    }
    if (at === null) break;
    // The order's own jitter (seeded by its id) on top of the market, inside the band and the limit.
    const bp = Math.max(-BAND_BP, Math.min(BAND_BP, marketBp(order.instrument, at) + spread(hashAt(seed, 300 + o.nextTranche), JITTER_BP)));
    let price = priceAtBp(order.reference_price_cents, bp, grid);
    if (order.limit_price_cents !== null) {
      price = order.side === 'buy' ? Math.min(price, order.limit_price_cents) : Math.max(price, order.limit_price_cents);
    }
    out.push({ kind: 'fill', atMs: at, o, qty: tranche.qty, priceCents: price });
    cum += tranche.qty;
    o.lastExecMs = at;
    o.scanFromMs = Number.NEGATIVE_INFINITY;
    o.nextTranche++;
  }
  if (cum === order.qty) o.status = 'filled';
}
