import type { Kysely } from 'kysely';
import type { OrderId } from '../lib/ids.js';
import type { Database } from '../storage/schema.js';
import type { CancelReason, CancelRequestReason, FailureReason, RequestRefusal, TimeInForce } from '../orders/core/lifecycle.js';

/**
 * The partner connector: the one I/O seam between the router and an SGI's order gateway. The
 * sandbox implements it with a simulator (sandbox/); the FIX connector (fix/) speaks FIX 4.4 to an
 * SGI's gateway behind the same interface.
 *
 * Contract, for every implementation:
 *
 * 1. `submit` is idempotent per `order_id`. Calling it again for an order the partner already holds
 *    (the router retrying after a time-out, a ConnectorUnavailableError or a crash) creates nothing
 *    and returns the outcome of the first hand-over, with the same report. `cancel` and `amend` are
 *    idempotent per `request_id`: the router repeats a request with the same id until it gets an
 *    answer, and the partner acts on it once.
 * 2. Every outcome is an ExecutionReport in the partner's report log, readable through `reports`.
 *    The report returned by `submit`, `cancel` or `amend` is also in the log: the router applies it
 *    from whichever place it reaches first, and drops the second copy because its `seq` is not above
 *    the last one applied for the order (`report_id` is stored with a fill, not used to deduplicate).
 * 3. Per order, reports have `seq` 1, 2, 3, ... with no gap, in the order the partner produced them.
 *    Report 1 is `accepted` or `rejected`. After `accepted` come zero or more `partial_fill`,
 *    `replaced` (an amend took effect) and `request_refused` (a cancel or amend answered `pending`
 *    was then refused), in any order, then at most one final report: `fill` (cum_qty = qty),
 *    `cancelled` (the remaining quantity, with its reason) or `rejected` (an exchange refusal after
 *    acceptance, with nothing filled). Nothing follows a final report: a request still waiting when
 *    the order ends is refused by that end (the router records `already_filled`, `already_rejected`
 *    or, for an amend, `already_cancelled`), unless the final report is the `cancelled` that answers
 *    it. The partner cancels on its own with reason `partner` (or `expired`, when the exchange
 *    expired the order, or `unfilled`, for the rest of an ioc or fok order); such a report carries
 *    no `request_id`.
 * 4. `reports(since)` returns the log after `since`, oldest first, and the position to pass next.
 *    Delivery is at-least-once: a report may come again (for instance when the router crashed before
 *    storing the position), never out of order within one order. What the router does with it
 *    (report-log-reader.ts, and router.ts's `apply`): one process at a time reads a connector's log,
 *    under a lease on it; each report is applied in a savepoint of its own, which locks the order,
 *    keeps its last applied `seq` and applies the report only when its `seq` is the next one
 *    (`classifyReport`): a duplicate is dropped, a report for an order the service does not hold is
 *    skipped, and a report that does not fit the order's state is marked seen and logged. On a gap
 *    (an earlier report of that order is missing), or a report that fails to apply, the router
 *    stops the batch and keeps the old position, so the batch is read again later; otherwise it
 *    stores the new position with the batch's last reports. A crash in between only makes reports
 *    come again, which the
 *    `seq` check drops. A connector that writes its log in a database transaction of its own (the
 *    FIX connector) may also apply the reports to their orders in that transaction, through the
 *    router's `ApplyToOrders`: the same `seq` check holds, so the log's reader then finds them
 *    applied, and a report that could not be applied there is applied when the log is read.
 * 5. Errors: ConnectorUnavailableError means "not reached, or no answer": nothing is known to have
 *    happened, retry later (submit, cancel and amend are safe to repeat). The router treats a
 *    `submit` that has not answered within its hand-over time-out the same way, and asks again after
 *    a backoff (backoff.ts) with the same order. Any other exception is a bug: the router lets it
 *    propagate.
 */
export interface PartnerConnector {
  /** Stable name of the connector, used in logs, metrics and report ids. */
  readonly name: string;
  /**
   * Hands an order over. Resolves when the partner has answered: `accepted` (the order is
   * `routed`) or `rejected` (the order is `failed` with the report's reason). Throws
   * ConnectorUnavailableError when the partner cannot be reached; the router retries with the same
   * order.
   */
  submit(order: OrderForPartner): Promise<SubmitResult>;
  /**
   * Asks the partner to cancel what remains of an order. `cancelled` when it did at once (an order
   * already cancelled answers with its `cancelled` report, whatever the request); `pending` when it
   * took the request and will answer in the log (a `cancelled` report, or the order's other final
   * report); `refused` when it will not (`unknown_order` only when the connector never handed the
   * order to the partner, so the router may cancel it locally; a refusal from the partner leaves the
   * order as its reports make it). Throws ConnectorUnavailableError.
   */
  cancel(orderId: OrderId, request: CancelRequest): Promise<CancelResult>;
  /**
   * Asks the partner to change the quantity or the limit price of an open limit order (a
   * cancel/replace). `replaced` when it did at once; `pending` when it will answer in the log (a
   * `replaced` or a `request_refused` report, or the order's final report); `refused` when it will
   * not. Throws ConnectorUnavailableError.
   */
  amend(orderId: OrderId, request: AmendRequest): Promise<AmendResult>;
  /**
   * The reports after position `since` (null: from the beginning), at most `limit` of them (the
   * connector may return fewer; an empty list means "nothing new now"). `position` is what to pass
   * next time: after the last report returned, or `since` itself when there are none. Positions are
   * opaque strings issued by this connector; a position it no longer recognises (its log was reset)
   * is read as null, which is safe because duplicates are dropped by `seq`.
   */
  reports(since: string | null, options?: { limit?: number }): Promise<ReportBatch>;
}

/** What a partner needs to execute an order. */
export interface OrderForPartner {
  /** The service's order id; the partner's idempotency key. */
  readonly order_id: OrderId;
  /** `<TICKER>.<EXCHANGE>`. */
  readonly instrument: string;
  /** The instrument's ISIN when the catalogue has one; null or absent (orders handed over by an older version): none. */
  readonly isin?: string | null;
  /**
   * The instrument's catalogue status (with its tick and band below) as the service knows it at the
   * hand-over: the one the order was just checked against when the request hands it over, the
   * catalogue's at the time of a retry by the router.
   */
  readonly instrument_status: 'active' | 'suspended';
  readonly side: 'buy' | 'sell';
  readonly qty: number;
  /** null for a market order. */
  readonly limit_price_cents: number | null;
  /** The instrument's reference price when the order was placed. */
  readonly reference_price_cents: number;
  readonly time_in_force: TimeInForce;
  /** `YYYY-MM-DD` for `gtd`, else null. */
  readonly expire_date: string | null;
  /** The instrument's tick: every price is a multiple of it. Absent (orders handed over by an older version): 1. */
  readonly tick_size_cents?: number;
  /** The instrument's price band around the reference price, limits included; null or absent: no band. */
  readonly price_limits?: { readonly low_cents: number; readonly high_cents: number } | null;
  /**
   * The investor's account number at the SGI, fixed when the order was accepted (registered by the
   * client for the subject, else the partner's default); null or absent (orders of an older
   * version): none, and a connector may use its own default. The same on every hand-over of the order.
   */
  readonly account?: string | null;
}

/** A cancel request; `request_id` is unique per request of the service (`<order id>.<n>`). */
export interface CancelRequest {
  readonly request_id: string;
  readonly reason: CancelRequestReason;
}

/** An amend request: the new quantity, the new limit, or both. */
export interface AmendRequest {
  readonly request_id: string;
  readonly qty?: number;
  readonly limit_price_cents?: number;
}

/** Why a partner rejected an order: the order's `failure_reason`. */
export type RejectReason = FailureReason;

interface ReportBase {
  /** Globally unique: the same report delivered twice has the same id. */
  readonly report_id: string;
  readonly order_id: OrderId;
  /** 1, 2, 3, ... per order, without gaps. */
  readonly seq: number;
  /** When the partner produced the report (ISO 8601, UTC, milliseconds). */
  readonly occurred_at: string;
}

/** The partner took the order: `created -> routed`. Always seq 1 when present. */
export interface AcceptedReport extends ReportBase {
  readonly type: 'accepted';
}

interface ExecutionBase extends ReportBase {
  readonly fill_qty: number;
  readonly fill_price_cents: number;
  /** Quantity filled so far, this fill included; `leaves_qty` = qty - cum_qty. */
  readonly cum_qty: number;
  readonly leaves_qty: number;
  /** The exchange's trade reference, e.g. `BRVM-20261122-000123`. */
  readonly exchange_ref: string;
  /** When the trade executed on the exchange (ISO 8601, UTC, milliseconds). */
  readonly executed_at: string;
}

/** Part of the order executed; `leaves_qty > 0`. */
export interface PartialFillReport extends ExecutionBase {
  readonly type: 'partial_fill';
}

/** The last execution of the order; `leaves_qty` is 0 and the order is `filled`. */
export interface FillReport extends ExecutionBase {
  readonly type: 'fill';
}

/**
 * The order failed: refused by the SGI at hand-over (seq 1) or by the exchange after acceptance
 * (with nothing filled). The order becomes `failed` with this reason.
 */
export interface RejectedReport extends ReportBase {
  readonly type: 'rejected';
  readonly reason: RejectReason;
}

/** The rest of the order was cancelled: `cancelled_qty` = qty - `cum_qty`. */
export interface CancelledReport extends ReportBase {
  readonly type: 'cancelled';
  readonly cancelled_qty: number;
  readonly cum_qty: number;
  readonly reason: CancelReason;
  /** The cancel request this answers; null when the partner cancelled on its own. */
  readonly request_id: string | null;
}

/** An amend took effect: the order's quantity and limit are now these; `leaves_qty` = qty - cum_qty. */
export interface ReplacedReport extends ReportBase {
  readonly type: 'replaced';
  readonly request_id: string;
  readonly qty: number;
  readonly limit_price_cents: number | null;
  readonly cum_qty: number;
  readonly leaves_qty: number;
}

/** A cancel or amend that the partner had taken as `pending` was refused; the order goes on as it was. */
export interface RequestRefusedReport extends ReportBase {
  readonly type: 'request_refused';
  readonly request_id: string;
  readonly request: 'cancel' | 'amend';
  readonly reason: RequestRefusal;
}

export type ExecutionReport =
  | AcceptedReport
  | PartialFillReport
  | FillReport
  | RejectedReport
  | CancelledReport
  | ReplacedReport
  | RequestRefusedReport;
export type ExecutionReportType = ExecutionReport['type'];

export type SubmitResult =
  | { readonly status: 'accepted'; readonly report: AcceptedReport }
  | { readonly status: 'rejected'; readonly report: RejectedReport };

/**
 * The answer to a cancel. A refusal because the order already ended (`already_filled`,
 * `already_rejected`) leaves the reports that ended it in the log (or already applied).
 */
export type CancelResult =
  | { readonly status: 'cancelled'; readonly report: CancelledReport }
  | { readonly status: 'pending' }
  | { readonly status: 'refused'; readonly reason: RequestRefusal };

/** The answer to an amend; see CancelResult for refusals. */
export type AmendResult =
  | { readonly status: 'replaced'; readonly report: ReplacedReport }
  | { readonly status: 'pending' }
  | { readonly status: 'refused'; readonly reason: RequestRefusal };

export interface ReportBatch {
  readonly reports: readonly ExecutionReport[];
  readonly position: string | null;
}

/**
 * Applies reports to their orders inside `trx`, the transaction that writes them to a connector's
 * log (see 4. above); resolves with what to run once that transaction has committed. Never throws
 * for a report it could not apply: that report stays in the log for the router's reader.
 */
export type ApplyToOrders = (trx: Kysely<Database>, reports: readonly ExecutionReport[]) => Promise<(() => void) | undefined>;

/** The partner could not be reached or did not answer; nothing is known to have happened. */
export class ConnectorUnavailableError extends Error {
  readonly code = 'connector_unavailable' as const;
  readonly connector: string;
  /** A hint from the partner, when it gave one; the router's own retry schedule decides. */
  readonly retryAfterMs: number | undefined;
  constructor(
    connector: string,
    message = `Partner connector ${connector} is unavailable`,
    options: { retryAfterMs?: number; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ConnectorUnavailableError';
    this.connector = connector;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/**
 * Where a report stands relative to the last `seq` the router applied for its order (0 when none):
 * `next` apply it now; `duplicate` already applied, drop it; `gap` an earlier report is missing,
 * hold it and read the log again (a conforming connector never produces this in one pass).
 */
export function classifyReport(lastAppliedSeq: number, report: Pick<ExecutionReport, 'seq'>): 'next' | 'duplicate' | 'gap' {
  if (report.seq <= lastAppliedSeq) return 'duplicate';
  return report.seq === lastAppliedSeq + 1 ? 'next' : 'gap';
}

/** Whether a report ends the order at the partner. */
export function isFinalReport(report: ExecutionReport): boolean {
  return report.type === 'fill' || report.type === 'cancelled' || report.type === 'rejected';
}
