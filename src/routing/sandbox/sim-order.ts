import { isoMillis } from '../../lib/clock.js';
import { TIME_IN_FORCE, type CancelReason, type RequestRefusal } from '../../orders/core/lifecycle.js';
import { INSTRUMENT_CODE_PATTERN } from '../../partners/markets.js';
import type {
  AmendRequest,
  CancelRequest,
  CancelledReport,
  ExecutionReport,
  OrderForPartner,
  ReplacedReport,
  RequestRefusedReport,
  SubmitResult,
} from '../connector.js';
import {
  FIRST_FILL_DELAY_MS,
  PRICE_TICK_MS,
  crosses,
  executionPriceCents,
  gridOf,
  priceRange,
  simulatedPriceCents,
  tranchesFor,
  type Tranche,
} from './market.js';
import type { SessionRule } from './session.js';
import {
  AMEND_REFUSED_QTY,
  NEVER_FILL_BUY_LIMIT_CENTS,
  NEVER_FILL_SELL_LIMIT_CENTS,
  PARTIAL_THEN_REST_FILL_QTY,
  TEST_QTY,
} from './test-values.js';

/**
 * One order at the simulated SGI (pure): its state, when it next moves, and the reports it makes as
 * time passes. The simulator (simulator.ts) keeps the orders, the log and the clock.
 */

export type SimStatus = 'open' | 'filled' | 'rejected' | 'cancelled';

/** A request the partner took as pending (test value 202), answered at `atMs`. */
export type Deferred =
  | { readonly atMs: number; readonly kind: 'cancel'; readonly request: CancelRequest }
  | { readonly atMs: number; readonly kind: 'amend'; readonly request: AmendRequest };

export interface SimOrder {
  /** The order's current terms: an amend changes `qty` and `limit_price_cents`. */
  order: OrderForPartner;
  readonly index: number;
  plan: readonly Tranche[];
  /** Nothing executes until the order is cancelled (a limit that can never be crossed, qty 410, 504). */
  rests: boolean;
  readonly exchangeReject: { readonly atMs: number } | null;
  /** The partner's own cancel (qty 410) or the exchange's expiry (qty 504). */
  readonly partnerCancel: { readonly atMs: number; readonly reason: CancelReason } | null;
  /** Whether cancels and amends are answered later (qty 202). */
  readonly answersLater: boolean;
  /** The test value 7777: one partial execution, then the rest rests, also after an amend. */
  readonly partialThenRest: boolean;
  /** Requests taken as pending, in the order made (so by answer time). */
  deferred: Deferred[];
  /** The report each amend was answered with in the log (a repeated request gets it again). */
  readonly answered: Map<string, ReplacedReport | RequestRefusedReport>;
  readonly submitResult: SubmitResult;
  status: SimStatus;
  nextSeq: number;
  cumQty: number;
  nextTranche: number;
  /** Acceptance, the last execution or the last amend: the next tranche's delay runs from it. */
  lastMoveMs: number;
  /** For a limit order: the next time to test for a crossing of the current tranche. */
  scanFromMs: number;
  cancelReport: CancelledReport | null;
  /** The time it is queued for in the wake-up queue; null when it is not queued. */
  wakeAt: number | null;
  /** The exchange's sessions the order executes in; null: the market never closes. */
  readonly session: SessionRule | null;
}

export type ReportBody = DistributiveOmit<ExecutionReport, 'report_id' | 'order_id' | 'seq'>;
/** A report due at `atMs`, computed by collectDue and appended to the log in time order. */
export interface Due {
  readonly atMs: number;
  readonly o: SimOrder;
  readonly body: ReportBody;
}

const MAX_QTY = 1_000_000_000;
const MAX_PRICE = 1_000_000_000_000;

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

export function assertOrder(order: OrderForPartner): void {
  const int = (n: unknown, max: number) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 1 && n <= max;
  const problems: string[] = [];
  if (!new RegExp(INSTRUMENT_CODE_PATTERN).test(order.instrument)) problems.push('instrument');
  if (order.side !== 'buy' && order.side !== 'sell') problems.push('side');
  if (!int(order.qty, MAX_QTY)) problems.push('qty');
  if (order.limit_price_cents !== null && !int(order.limit_price_cents, MAX_PRICE)) problems.push('limit_price_cents');
  if (!int(order.reference_price_cents, MAX_PRICE)) problems.push('reference_price_cents');
  if (order.instrument_status !== 'active' && order.instrument_status !== 'suspended') problems.push('instrument_status');
  if (!(TIME_IN_FORCE as readonly string[]).includes(order.time_in_force)) problems.push('time_in_force');
  if (order.tick_size_cents !== undefined && !int(order.tick_size_cents, MAX_PRICE)) problems.push('tick_size_cents');
  const band = order.price_limits;
  if (
    band !== undefined &&
    band !== null &&
    !(int(band.low_cents, 2 * MAX_PRICE) && int(band.high_cents, 2 * MAX_PRICE) && band.low_cents <= band.high_cents)
  )
    problems.push('price_limits');
  if (problems.length > 0) throw new TypeError(`malformed order ${order.order_id}: ${problems.join(', ')}`);
}

/** A limit the synthetic price can never cross (it stays in `priceRange`). */
export function neverFills(order: OrderForPartner): boolean {
  const limit = order.limit_price_cents;
  if (limit === null) return false;
  const { lo, hi } = priceRange(order.reference_price_cents, gridOf(order));
  if (order.side === 'buy') return limit === NEVER_FILL_BUY_LIMIT_CENTS || limit < lo;
  return limit === NEVER_FILL_SELL_LIMIT_CENTS || limit > hi;
}

/** How an accepted order executes: `tranchesFor` its quantity, or one execution of 1111 then nothing for the test value 7777. */
export function fillPlan(order: Pick<OrderForPartner, 'order_id' | 'qty'>): readonly Tranche[] {
  if (order.qty === TEST_QTY.PARTIAL_THEN_REST) return [{ qty: PARTIAL_THEN_REST_FILL_QTY, delayMs: FIRST_FILL_DELAY_MS }];
  return tranchesFor(order.order_id, order.qty);
}

export function endedRefusal(status: SimStatus): RequestRefusal | null {
  switch (status) {
    case 'filled':
      return 'already_filled';
    case 'rejected':
      return 'already_rejected';
    case 'cancelled':
      return 'already_cancelled';
    case 'open':
      return null;
  }
}

export function cancelledBody(o: SimOrder, atMs: number, reason: CancelReason, requestId: string | null): ReportBody {
  return {
    type: 'cancelled',
    occurred_at: isoMillis(atMs),
    cancelled_qty: o.order.qty - o.cumQty,
    cum_qty: o.cumQty,
    reason,
    request_id: requestId,
  };
}

export function executionBody(o: SimOrder, qty: number, priceCents: number, atMs: number, exchangeRef: string): ReportBody {
  const cum = o.cumQty + qty;
  const at = isoMillis(atMs);
  return {
    type: cum === o.order.qty ? 'fill' : 'partial_fill',
    occurred_at: at,
    fill_qty: qty,
    fill_price_cents: priceCents,
    cum_qty: cum,
    leaves_qty: o.order.qty - cum,
    exchange_ref: exchangeRef,
    executed_at: at,
  };
}

/** The partner's answer to an amend of an open order at `atMs`: the replaced report, or a refusal. */
export function amendAnswer(
  o: SimOrder,
  request: AmendRequest,
  atMs: number,
): ReportBody & ({ type: 'replaced' } | { type: 'request_refused'; reason: RequestRefusal }) {
  const qty = request.qty ?? o.order.qty;
  const refuse = (reason: RequestRefusal) => ({
    type: 'request_refused' as const,
    occurred_at: isoMillis(atMs),
    request_id: request.request_id,
    request: 'amend' as const,
    reason,
  });
  if (qty <= o.cumQty) return refuse('below_filled');
  if (request.qty === AMEND_REFUSED_QTY) return refuse('partner_refused');
  return {
    type: 'replaced',
    occurred_at: isoMillis(atMs),
    request_id: request.request_id,
    qty,
    limit_price_cents: request.limit_price_cents ?? o.order.limit_price_cents,
    cum_qty: o.cumQty,
    leaves_qty: qty - o.cumQty,
  };
}

/**
 * The order's new terms take effect at `atMs`: the tranches not yet executed are replanned for the
 * new remaining quantity (a qty 7777 order keeps its one partial execution, capped to what remains),
 * and the next one comes no sooner than a first execution would after acceptance.
 */
export function applyReplace(o: SimOrder, report: ReplacedReport, atMs: number): void {
  o.order = { ...o.order, qty: report.qty, limit_price_cents: report.limit_price_cents };
  const remaining = report.qty - o.cumQty;
  const done = o.plan.slice(0, o.nextTranche);
  const rest = o.plan.slice(o.nextTranche);
  o.plan = o.partialThenRest
    ? [...done, ...rest.map((t) => ({ ...t, qty: Math.min(t.qty, remaining) }))]
    : [...done, ...tranchesFor(o.order.order_id, remaining)];
  o.rests = o.exchangeReject !== null || o.partnerCancel !== null || neverFills(o.order);
  o.lastMoveMs = atMs;
  o.scanFromMs = Number.NEGATIVE_INFINITY;
}

/** The next time the order's plan lets it execute (a limit order: no sooner than its scan), or null. */
function nextFillAt(o: SimOrder): number | null {
  if (o.rests) return null;
  const tranche = o.plan[o.nextTranche];
  if (tranche === undefined) return null;
  const earliest = o.lastMoveMs + tranche.delayMs;
  if (o.scanFromMs === Number.POSITIVE_INFINITY) return null;
  return o.order.limit_price_cents === null && o.session === null ? earliest : Math.max(earliest, o.scanFromMs);
}

/** The time of the order's next event that is not an execution (rejection, partner cancel, answer). */
function nextControlAt(o: SimOrder): number | null {
  const times = [o.exchangeReject?.atMs, o.partnerCancel?.atMs, o.deferred[0]?.atMs].filter((t): t is number => t !== undefined);
  return times.length === 0 ? null : Math.min(...times);
}

/** The earliest time `o` can next move, or null when it cannot. collectDue finds nothing before it. */
export function wakeAt(o: SimOrder): number | null {
  if (o.status !== 'open') return null;
  const fill = nextFillAt(o);
  const control = nextControlAt(o);
  if (fill === null) return control;
  return control === null ? fill : Math.min(fill, control);
}

/**
 * Appends to `out` the reports of `o` due at or before `nowMs`, in time order, and moves `o` past
 * them. An execution and another event at the same time: the execution comes first.
 */
export function collectDue(o: SimOrder, nowMs: number, out: Due[]): void {
  while (o.status === 'open') {
    const control = nextControlAt(o);
    const until = control === null ? nowMs : Math.min(nowMs, control);
    const fill = findFill(o, until);
    if (fill !== null) {
      const tranche = o.plan[o.nextTranche] as Tranche;
      out.push({ atMs: fill.at, o, body: executionBody(o, tranche.qty, fill.price, fill.at, '') });
      o.cumQty += tranche.qty;
      o.lastMoveMs = fill.at;
      o.scanFromMs = Number.NEGATIVE_INFINITY;
      o.nextTranche++;
      if (o.cumQty === o.order.qty) o.status = 'filled';
      continue;
    }
    if (control === null || control > nowMs) return;
    controlEvent(o, control, out);
  }
}

/** The next execution at or before `until` (its time and price), or null; remembers where the scan stopped. */
function findFill(o: SimOrder, until: number): { at: number; price: number } | null {
  const earliest = nextFillAt(o);
  if (earliest === null) return null;
  if (o.session !== null) return findSessionFill(o, o.session, earliest, until);
  const at = o.order.limit_price_cents === null ? (earliest <= until ? earliest : null) : scan(o, earliest, until);
  return at === null ? null : { at, price: executionPriceCents(o.order, o.nextTranche, at) };
}

/** Tests the price once per tick from `from`; resumes where the last call stopped. */
function scan(o: SimOrder, from: number, until: number): number | null {
  let t = from;
  for (; t <= until; t += PRICE_TICK_MS) if (crosses(o.order, t)) return t;
  o.scanFromMs = t;
  return null;
}

/**
 * findFill on an exchange with sessions (session.ts): the first window from `from` in which the
 * order crosses. At an auction the order meets the auction's one price; in continuous trading, the
 * moving price with the order's own jitter.
 */
function findSessionFill(o: SimOrder, session: SessionRule, from: number, until: number): { at: number; price: number } | null {
  let t = from;
  while (t <= until) {
    const w = session.next(o.order.instrument, t);
    if (w === null) {
      o.scanFromMs = Number.POSITIVE_INFINITY;
      return null;
    }
    if (w.atMs > until) {
      t = w.atMs;
      break;
    }
    if (w.kind === 'auction') {
      const price = auctionPriceCents(o.order, w.atMs);
      if (meetsLimit(o.order, price)) return { at: w.atMs, price };
      t = w.untilMs;
      continue;
    }
    const end = Math.min(until, w.untilMs - 1);
    for (t = w.atMs; t <= end; t += PRICE_TICK_MS)
      if (crosses(o.order, t)) return { at: t, price: executionPriceCents(o.order, o.nextTranche, t) };
    if (t < w.untilMs) break;
  }
  o.scanFromMs = t;
  return null;
}

/** The one price of an auction: the market's at its instant, without an order's jitter. */
function auctionPriceCents(order: OrderForPartner, atMs: number): number {
  return simulatedPriceCents(order.instrument, order.reference_price_cents, atMs, gridOf(order));
}

function meetsLimit(order: OrderForPartner, price: number): boolean {
  const limit = order.limit_price_cents;
  return limit === null || (order.side === 'buy' ? price <= limit : price >= limit);
}

/**
 * The price at which an ioc or fok order executes at once at `atMs`, or null when it cannot: it
 * rests, or its limit is not crossed, or (on an exchange with sessions) no matching phase is on.
 */
export function immediatePriceCents(o: SimOrder, atMs: number): number | null {
  if (o.rests) return null;
  if (o.session === null) return crosses(o.order, atMs) ? executionPriceCents(o.order, 0, atMs) : null;
  const w = o.session.next(o.order.instrument, atMs);
  if (w === null || w.atMs !== atMs) return null;
  if (w.kind === 'auction') {
    const price = auctionPriceCents(o.order, w.atMs);
    return meetsLimit(o.order, price) ? price : null;
  }
  return crosses(o.order, atMs) ? executionPriceCents(o.order, 0, atMs) : null;
}

/** Applies the non-execution event of `o` due at `at` (see nextControlAt). */
function controlEvent(o: SimOrder, at: number, out: Due[]): void {
  const occurred_at = isoMillis(at);
  if (o.exchangeReject !== null && o.exchangeReject.atMs === at) {
    out.push({ atMs: at, o, body: { type: 'rejected', occurred_at, reason: 'instrument_suspended' } });
    o.status = 'rejected';
    return;
  }
  if (o.partnerCancel !== null && o.partnerCancel.atMs === at) {
    out.push({ atMs: at, o, body: cancelledBody(o, at, o.partnerCancel.reason, null) });
    o.status = 'cancelled';
    return;
  }
  const next = o.deferred.shift() as Deferred;
  if (next.kind === 'cancel') {
    out.push({ atMs: at, o, body: cancelledBody(o, at, next.request.reason, next.request.request_id) });
    o.status = 'cancelled';
    return;
  }
  const answer = amendAnswer(o, next.request, at);
  out.push({ atMs: at, o, body: answer });
  if (answer.type === 'replaced') applyReplace(o, { ...answer, report_id: '', order_id: o.order.order_id, seq: 0 }, at);
}
