import { isoMillis } from '../../lib/clock.js';
import type { OrderId } from '../../lib/ids.js';
import { exchangeOfInstrument } from '../../partners/markets.js';
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
  type SubmitResult,
} from '../connector.js';
import {
  amendAnswer,
  applyReplace,
  assertOrder,
  cancelledBody,
  collectDue,
  endedRefusal,
  executionBody,
  fillPlan,
  immediatePriceCents,
  neverFills,
  wakeAt,
  type Deferred,
  type Due,
  type ReportBody,
  type SimOrder,
} from './sim-order.js';
import type { SessionRule } from './session.js';
import { DEFERRED_ANSWER_MS, EXCHANGE_REJECT_DELAY_MS, PARTNER_CANCEL_DELAY_MS, TEST_QTY, UNAVAILABLE_ATTEMPTS } from './test-values.js';
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
  /**
   * The exchanges' sessions: orders execute only in the phases where their exchange matches (see
   * session.ts). Without it the market never closes, which is how the sandbox partners trade on
   * real time, so that integrations can be tried at any hour.
   */
  readonly session?: SessionRule;
}

const DEFAULT_BATCH = 500;

export class SgiSimulator {
  readonly name: string;
  readonly #epoch: string;
  readonly #session: SessionRule | null;
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
    this.#session = options.session ?? null;
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
        throw new ConnectorUnavailableError(
          this.name,
          `Sandbox partner ${this.name} is unavailable (test value qty ${TEST_QTY.UNAVAILABLE}, attempt ${attempts} of ${UNAVAILABLE_ATTEMPTS})`,
        );
      }
    }

    const reason: RejectReason | null =
      order.qty === TEST_QTY.SGI_REJECTED ? 'sgi_rejected' : order.qty === TEST_QTY.INSUFFICIENT_FUNDS ? 'insufficient_funds' : null;
    const suspended = order.instrument_status === 'suspended' || order.qty === TEST_QTY.INSTRUMENT_SUSPENDED;
    const partnerCancel = suspended
      ? null
      : order.qty === TEST_QTY.PARTNER_CANCELS
        ? 'partner'
        : order.qty === TEST_QTY.EXCHANGE_EXPIRES
          ? 'expired'
          : null;
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
      session: this.#session,
    };

    if (reason !== null && !suspended) {
      const report = this.#append<RejectedReport>(base, { type: 'rejected', occurred_at: isoMillis(now), reason });
      const o: SimOrder = {
        ...base,
        nextSeq: 2,
        plan: [],
        rests: true,
        exchangeReject: null,
        partnerCancel: null,
        submitResult: { status: 'rejected', report },
        status: 'rejected',
      };
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
    if (done !== undefined)
      return done.type === 'replaced' ? { status: 'replaced', report: done } : { status: 'refused', reason: done.reason };
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
      const withRef =
        body.type === 'fill' || body.type === 'partial_fill'
          ? { ...body, exchange_ref: this.#exchangeRef(o.order.instrument, atMs) }
          : body;
      const report = this.#append(o, withRef);
      if (report.type === 'cancelled') this.#settled(o, report);
      if (report.type === 'replaced' || report.type === 'request_refused') o.answered.set(report.request_id, report);
    }
    return nowMs;
  }

  /** ioc and fok: what can execute now does, and the rest is cancelled (`unfilled`). */
  #settleAtOnce(o: SimOrder, now: number): void {
    const first = o.plan[0];
    const price = first === undefined ? null : immediatePriceCents(o, now);
    const available = price !== null && first !== undefined ? first.qty : 0;
    const fills = o.order.time_in_force === 'fok' ? (available === o.order.qty ? available : 0) : available;
    if (fills > 0 && price !== null) {
      this.#append(o, executionBody(o, fills, price, now, this.#exchangeRef(o.order.instrument, now)));
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
