import { isoMillis } from '../../lib/clock.js';
import type { OrderId } from '../../lib/ids.js';
import type { CancelReason, RequestRefusal } from '../../orders/core/lifecycle.js';
import { INSTRUMENT_CODE_PATTERN, exchangeOfInstrument } from '../../partners/markets.js';
import {
  ConnectorUnavailableError,
  type AcceptedReport,
  type AmendRequest,
  type AmendResult,
  type CancelRequest,
  type CancelResult,
  type CancelledReport,
  type ExecutionReport,
  type OrderForPartner,
  type RejectReason,
  type RejectedReport,
  type ReplacedReport,
  type ReportBatch,
  type RequestRefusedReport,
  type SubmitResult,
} from '../connector.js';
import { FIRST_FILL_DELAY_MS, PRICE_TICK_MS, crosses, executionPriceCents, priceBand, tranchesFor, type Tranche } from './market.js';
import {
  AMEND_REFUSED_QTY,
  DEFERRED_ANSWER_MS,
  EXCHANGE_REJECT_DELAY_MS,
  NEVER_FILL_BUY_LIMIT_CENTS,
  NEVER_FILL_SELL_LIMIT_CENTS,
  PARTIAL_THEN_REST_FILL_QTY,
  PARTNER_CANCEL_DELAY_MS,
  TEST_QTY,
  UNAVAILABLE_ATTEMPTS,
} from './test-values.js';
import { WakeQueue } from './wake-queue.js';

/**
 * A simulated SGI for sandbox deployments: it takes orders, fills them against a synthetic market
 * price (market.ts), cancels and amends them on request, rejects them on documented test values
 * (test-values.ts), and keeps a report log, as a partner's gateway would.
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

export interface SimulatorOptions {
  /** The partner's name; it prefixes report ids. */
  readonly name: string;
  /** Distinguishes this instance's log positions from another's (a restart); default `0`. */
  readonly epoch?: string;
}

type SimStatus = 'open' | 'filled' | 'rejected' | 'cancelled';

/** A request the partner took as pending (test value 202), answered at `atMs`. */
type Deferred = { readonly atMs: number; readonly kind: 'cancel'; readonly request: CancelRequest } | { readonly atMs: number; readonly kind: 'amend'; readonly request: AmendRequest };

interface SimOrder {
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
}

type ReportBody = DistributiveOmit<ExecutionReport, 'report_id' | 'order_id' | 'seq'>;
/** A report due at `atMs`, computed by collectDue and appended to the log in time order. */
interface Due {
  readonly atMs: number;
  readonly o: SimOrder;
  readonly body: ReportBody;
}

const DEFAULT_BATCH = 500;
const MAX_QTY = 1_000_000_000;
const MAX_PRICE = 1_000_000_000_000;

export class SgiSimulator {
  readonly name: string;
  readonly #epoch: string;
  readonly #orders = new Map<string, SimOrder>();
  /**
   * The open orders that may still move, by the earliest time they can (a resting order with no
   * request waiting never does until it is cancelled): advance() takes the due ones only, not every
   * order ever submitted nor every open one.
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
   * taken returns the first result and adds nothing to the log. An ioc or fok order is settled at
   * once: its immediate execution, if any, and the cancel of the rest are in the log on return.
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
    const partnerCancel = suspended ? null : order.qty === TEST_QTY.PARTNER_CANCELS ? 'partner' : order.qty === TEST_QTY.EXCHANGE_EXPIRES ? 'expired' : null;
    const index = this.#orders.size;
    const base = {
      order,
      index,
      nextSeq: 1,
      cumQty: 0,
      nextTranche: 0,
      lastMoveMs: now,
      scanFromMs: Number.NEGATIVE_INFINITY,
      cancelReport: null,
      wakeAt: null,
      answersLater: order.qty === TEST_QTY.ANSWERS_LATER,
      partialThenRest: order.qty === TEST_QTY.PARTIAL_THEN_REST,
      deferred: [],
      answered: new Map(),
    };

    if (reason !== null && !suspended) {
      const report = this.#append<RejectedReport>(base, { type: 'rejected', occurred_at: isoMillis(now), reason });
      const o: SimOrder = { ...base, nextSeq: 2, plan: [], rests: true, exchangeReject: null, partnerCancel: null, submitResult: { status: 'rejected', report }, status: 'rejected' };
      this.#orders.set(order.order_id, o);
      return o.submitResult;
    }
    const accepted = this.#append<AcceptedReport>(base, { type: 'accepted', occurred_at: isoMillis(now) });
    const o: SimOrder = {
      ...base,
      nextSeq: 2,
      plan: suspended || partnerCancel !== null ? [] : fillPlan(order),
      rests: suspended || partnerCancel !== null || neverFills(order),
      exchangeReject: suspended ? { atMs: now + EXCHANGE_REJECT_DELAY_MS } : null,
      partnerCancel: partnerCancel === null ? null : { atMs: now + PARTNER_CANCEL_DELAY_MS, reason: partnerCancel },
      submitResult: { status: 'accepted', report: accepted },
      status: 'open',
    };
    this.#orders.set(order.order_id, o);
    if (!suspended && (order.time_in_force === 'ioc' || order.time_in_force === 'fok')) this.#settleAtOnce(o, now);
    else this.#schedule(o);
    return o.submitResult;
  }

  /**
   * Cancels what remains of an order at `nowMs`: executions due before `nowMs` happen first. An
   * order already cancelled answers with its cancel report, whatever the request. A `qty` 202 order
   * takes the request as pending and answers in the log later.
   */
  cancel(orderId: OrderId, request: CancelRequest, nowMs: number): CancelResult {
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
        if (o.answersLater) return this.#defer(o, { atMs: now + DEFERRED_ANSWER_MS, kind: 'cancel', request });
        const report = this.#append<CancelledReport>(o, cancelledBody(o, now, request.reason, request.request_id));
        this.#settled(o, report);
        return { status: 'cancelled', report };
      }
    }
  }

  /**
   * Changes the quantity or the limit of an open order at `nowMs` (executions due before `nowMs`
   * happen first). Refused when the order has ended, when the new quantity is not above what has
   * executed (`below_filled`), and for the test value (an amend to qty 13: `partner_refused`). The
   * order then executes as a new one would, from the time of the amend. A repeated request returns
   * its first answer.
   */
  amend(orderId: OrderId, request: AmendRequest, nowMs: number): AmendResult {
    const now = this.advance(nowMs);
    const o = this.#orders.get(orderId);
    if (!o) return { status: 'refused', reason: 'unknown_order' };
    const done = o.answered.get(request.request_id);
    if (done !== undefined) return done.type === 'replaced' ? { status: 'replaced', report: done } : { status: 'refused', reason: done.reason };
    const ended = endedRefusal(o.status);
    if (ended !== null) return { status: 'refused', reason: ended };
    if (o.answersLater) return this.#defer(o, { atMs: now + DEFERRED_ANSWER_MS, kind: 'amend', request });
    const answer = amendAnswer(o, request, now);
    if (answer.type === 'request_refused') return { status: 'refused', reason: answer.reason };
    const report = this.#append<ReplacedReport>(o, answer);
    this.#replaced(o, report, now);
    return { status: 'replaced', report };
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
   * Brings the market up to `nowMs`: every execution, exchange rejection, partner cancel and
   * deferred answer due at or before it is appended to the log, in time order (ties: order of
   * submission). Returns the simulator's time, which never goes backwards.
   */
  advance(nowMs: number): number {
    if (!Number.isFinite(nowMs)) throw new RangeError(`invalid time ${nowMs}`);
    if (nowMs <= this.#nowMs) return this.#nowMs;
    this.#nowMs = nowMs;
    const due: Due[] = [];
    while (this.#wakeups.peekAt() <= nowMs) {
      const { at, item: o } = this.#wakeups.pop()!;
      // An entry made stale by a cancel (or by a later schedule) is skipped.
      if (o.wakeAt !== at) continue;
      collectDue(o, nowMs, due);
      this.#schedule(o);
    }
    // Each order's reports are already in time order; a stable sort keeps them so.
    due.sort((a, b) => a.atMs - b.atMs || a.o.index - b.o.index);
    for (const { o, body, atMs } of due) {
      const withRef = body.type === 'fill' || body.type === 'partial_fill' ? { ...body, exchange_ref: this.#exchangeRef(o.order.instrument, atMs) } : body;
      const report = this.#append(o, withRef);
      if (report.type === 'cancelled') this.#settled(o, report);
      if (report.type === 'replaced' || report.type === 'request_refused') o.answered.set(report.request_id, report);
    }
    return nowMs;
  }

  /** ioc and fok: what can execute now does, and the rest is cancelled (`unfilled`). */
  #settleAtOnce(o: SimOrder, now: number): void {
    const first = o.plan[0];
    const available = !o.rests && first !== undefined && crosses(o.order, now) ? first.qty : 0;
    const fills = o.order.time_in_force === 'fok' ? (available === o.order.qty ? available : 0) : available;
    if (fills > 0) {
      this.#append(o, executionBody(o, fills, executionPriceCents(o.order, 0, now), now, this.#exchangeRef(o.order.instrument, now)));
      o.cumQty = fills;
      o.nextTranche = 1;
    }
    if (o.cumQty === o.order.qty) o.status = 'filled';
    else this.#settled(o, this.#append<CancelledReport>(o, cancelledBody(o, now, 'unfilled', null)));
  }

  #defer(o: SimOrder, request: Deferred): { status: 'pending' } {
    if (!o.deferred.some((d) => d.request.request_id === request.request.request_id)) {
      o.deferred.push(request);
      this.#schedule(o);
    }
    return { status: 'pending' };
  }

  #settled(o: SimOrder, report: CancelledReport): void {
    o.status = 'cancelled';
    o.cancelReport = report;
    o.deferred = [];
    o.wakeAt = null;
  }

  #replaced(o: SimOrder, report: ReplacedReport, now: number): void {
    o.answered.set(report.request_id, report);
    applyReplace(o, report, now);
    this.#schedule(o);
  }

  /** Queues `o` for the earliest time it can next move, if it can. */
  #schedule(o: SimOrder): void {
    o.wakeAt = wakeAt(o);
    if (o.wakeAt !== null) this.#wakeups.push(o.wakeAt, o);
  }

  /** Adds a report for `o` with its next `seq`; `R` is the type of `body`'s report. */
  #append<R extends ExecutionReport = ExecutionReport>(o: Pick<SimOrder, 'order' | 'nextSeq'>, body: ReportBody): R {
    const report = {
      report_id: `${this.name}:${o.order.order_id}:${o.nextSeq}`,
      order_id: o.order.order_id,
      seq: o.nextSeq,
      ...body,
    } as R;
    Object.freeze(report);
    this.#log.push(report);
    o.nextSeq++;
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
  if (!['day', 'gtc', 'gtd', 'ioc', 'fok'].includes(order.time_in_force)) problems.push('time_in_force');
  if (problems.length > 0) throw new TypeError(`malformed order ${order.order_id}: ${problems.join(', ')}`);
}

/** A limit the synthetic price can never cross (it stays within +-1% of the reference). */
function neverFills(order: OrderForPartner): boolean {
  const limit = order.limit_price_cents;
  if (limit === null) return false;
  const { lo, hi } = priceBand(order.reference_price_cents);
  if (order.side === 'buy') return limit === NEVER_FILL_BUY_LIMIT_CENTS || limit < lo;
  return limit === NEVER_FILL_SELL_LIMIT_CENTS || limit > hi;
}

/** How an accepted order executes: `tranchesFor` its quantity, or one execution of 1111 then nothing for the test value 7777. */
export function fillPlan(order: Pick<OrderForPartner, 'order_id' | 'qty'>): readonly Tranche[] {
  if (order.qty === TEST_QTY.PARTIAL_THEN_REST) return [{ qty: PARTIAL_THEN_REST_FILL_QTY, delayMs: FIRST_FILL_DELAY_MS }];
  return tranchesFor(order.order_id, order.qty);
}

function endedRefusal(status: SimStatus): RequestRefusal | null {
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

function cancelledBody(o: SimOrder, atMs: number, reason: CancelReason, requestId: string | null): ReportBody {
  return { type: 'cancelled', occurred_at: isoMillis(atMs), cancelled_qty: o.order.qty - o.cumQty, cum_qty: o.cumQty, reason, request_id: requestId };
}

function executionBody(o: SimOrder, qty: number, priceCents: number, atMs: number, exchangeRef: string): ReportBody {
  const cum = o.cumQty + qty;
  const at = isoMillis(atMs);
  return { type: cum === o.order.qty ? 'fill' : 'partial_fill', occurred_at: at, fill_qty: qty, fill_price_cents: priceCents, cum_qty: cum, leaves_qty: o.order.qty - cum, exchange_ref: exchangeRef, executed_at: at };
}

/** The partner's answer to an amend of an open order at `atMs`: the replaced report, or a refusal. */
function amendAnswer(o: SimOrder, request: AmendRequest, atMs: number): ReportBody & ({ type: 'replaced' } | { type: 'request_refused'; reason: RequestRefusal }) {
  const qty = request.qty ?? o.order.qty;
  const refuse = (reason: RequestRefusal) => ({ type: 'request_refused' as const, occurred_at: isoMillis(atMs), request_id: request.request_id, request: 'amend' as const, reason });
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
function applyReplace(o: SimOrder, report: ReplacedReport, atMs: number): void {
  o.order = { ...o.order, qty: report.qty, limit_price_cents: report.limit_price_cents };
  const remaining = report.qty - o.cumQty;
  const done = o.plan.slice(0, o.nextTranche);
  const rest = o.plan.slice(o.nextTranche);
  o.plan = o.partialThenRest ? [...done, ...rest.map((t) => ({ ...t, qty: Math.min(t.qty, remaining) }))] : [...done, ...tranchesFor(o.order.order_id, remaining)];
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
  return o.order.limit_price_cents === null ? earliest : Math.max(earliest, o.scanFromMs);
}

/** The time of the order's next event that is not an execution (rejection, partner cancel, answer). */
function nextControlAt(o: SimOrder): number | null {
  const times = [o.exchangeReject?.atMs, o.partnerCancel?.atMs, o.deferred[0]?.atMs].filter((t): t is number => t !== undefined);
  return times.length === 0 ? null : Math.min(...times);
}

/** The earliest time `o` can next move, or null when it cannot. collectDue finds nothing before it. */
function wakeAt(o: SimOrder): number | null {
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
function collectDue(o: SimOrder, nowMs: number, out: Due[]): void {
  while (o.status === 'open') {
    const control = nextControlAt(o);
    const until = control === null ? nowMs : Math.min(nowMs, control);
    const fill = findFill(o, until);
    if (fill !== null) {
      const tranche = o.plan[o.nextTranche] as Tranche;
      out.push({ atMs: fill, o, body: executionBody(o, tranche.qty, executionPriceCents(o.order, o.nextTranche, fill), fill, '') });
      o.cumQty += tranche.qty;
      o.lastMoveMs = fill;
      o.scanFromMs = Number.NEGATIVE_INFINITY;
      o.nextTranche++;
      if (o.cumQty === o.order.qty) o.status = 'filled';
      continue;
    }
    if (control === null || control > nowMs) return;
    controlEvent(o, control, out);
  }
}

/** The time of the next execution at or before `until`, or null; for a limit order, remembers where the scan stopped. */
function findFill(o: SimOrder, until: number): number | null {
  const earliest = nextFillAt(o);
  if (earliest === null) return null;
  if (o.order.limit_price_cents === null) return earliest <= until ? earliest : null;
  // Test the price once per tick from `earliest`; resume where the last call stopped.
  let t = earliest;
  for (; t <= until; t += PRICE_TICK_MS) if (crosses(o.order, t)) return t;
  o.scanFromMs = t;
  return null;
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
