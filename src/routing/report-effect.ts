import type { RequestRefusal } from '../orders/core/lifecycle.js';
import { applyFill, FillError } from '../orders/core/fills.js';
import { canTransition, isFinal, type OrderStatus } from '../orders/core/state-machine.js';
import type { Refusal } from '../orders/order.mapping.js';
import type { OrderRow } from '../orders/order.table.js';
import type { ExecutionReport } from './connector.js';

/** The events an applied report emits about its order, in this order. */
export type OrderEventType =
  | 'order.routed'
  | 'order.failed'
  | 'order.executed'
  | 'order.cancelled'
  | 'order.amended'
  | 'order.request_refused';

export interface Execution {
  readonly fill_qty: number;
  readonly fill_price_cents: number;
  readonly exchange_ref: string;
  readonly executed_at: string;
}

export type ReportEffect =
  | {
      readonly applies: true;
      readonly changes: Partial<OrderRow>;
      readonly execution: Execution | null;
      readonly events: readonly OrderEventType[];
    }
  /** The report does not fit the order (a partner bug, or a race with a local cancel): only its seq is recorded. */
  | { readonly applies: false; readonly changes: Partial<OrderRow>; readonly why: string };

/** The columns that clear a pending request (and its amend values). */
export const NO_PENDING_REQUEST = Object.freeze({
  pending_request: null,
  pending_request_id: null,
  cancel_request_reason: null,
  amend_qty: null,
  amend_limit_price_cents: null,
} satisfies Partial<OrderRow>);

/** The columns recording a refusal of the order's pending request (`request` says which kind). */
export function refusalChanges(request: 'cancel' | 'amend', reason: RequestRefusal, refusedAt: string): Partial<OrderRow> {
  const refusal: Refusal = { request, reason, refused_at: refusedAt };
  return { ...NO_PENDING_REQUEST, last_refusal: JSON.stringify(refusal) };
}

function pendingKind(row: Pick<OrderRow, 'pending_request'>): 'cancel' | 'amend' | null {
  return row.pending_request === 'pending_cancel' ? 'cancel' : row.pending_request === 'pending_amend' ? 'amend' : null;
}

function targetStatus(row: OrderRow, report: ExecutionReport): OrderStatus | null {
  switch (report.type) {
    case 'accepted':
      return 'routed';
    case 'rejected':
      return 'failed';
    case 'cancelled':
      return 'cancelled';
    case 'fill':
      return 'filled';
    case 'partial_fill':
      return 'partially_filled';
    case 'replaced':
      // An amend changes an open order's terms, not its status.
      return row.status === 'routed' || row.status === 'partially_filled' ? row.status : null;
    case 'request_refused':
      // Nothing follows a final report; a refusal after one would refuse the request a second time.
      return isFinal(row.status) ? null : row.status;
  }
}

/**
 * What applying `report` (the next one in seq for its order) does to the order `row`, at `now`: the
 * columns that change, the execution to store, and the events to emit. Pure.
 *
 * A pending request ends with the report that answers it (`replaced` or `request_refused` with its
 * request id; `cancelled` for a cancel), or with the order's final report, which refuses it: a fill
 * `already_filled`, a rejection `already_rejected`, and a cancel an amend `already_cancelled`. The
 * refusal is recorded on the order (`last_refusal`) and emitted as `order.request_refused`.
 */
export function reportEffect(row: OrderRow, report: ExecutionReport, now: number): ReportEffect {
  const seen: Partial<OrderRow> = { last_report_seq: report.seq, updated_at: now };
  const target = targetStatus(row, report);
  const changesTerms = report.type === 'replaced' || report.type === 'request_refused';
  if (target === null || (!changesTerms && !canTransition(row.status, target))) {
    return { applies: false, changes: seen, why: `a ${report.type} report does not fit a ${row.status} order` };
  }
  const pending = pendingKind(row);
  const ended = { next_route_at: null, expiry_due_at: null } satisfies Partial<OrderRow>;
  const refuseOnEnd = (reason: RequestRefusal): { changes: Partial<OrderRow>; events: OrderEventType[] } =>
    pending === null
      ? { changes: {}, events: [] }
      : { changes: refusalChanges(pending, reason, report.occurred_at), events: ['order.request_refused'] };

  switch (report.type) {
    case 'accepted':
      return {
        applies: true,
        execution: null,
        events: ['order.routed'],
        changes: { ...seen, status: 'routed', next_route_at: pending === null ? null : now, route_lease_until: null },
      };
    case 'rejected': {
      const refusal = refuseOnEnd('already_rejected');
      return {
        applies: true,
        execution: null,
        events: ['order.failed', ...refusal.events],
        changes: { ...seen, ...ended, ...refusal.changes, status: 'failed', failure_reason: report.reason },
      };
    }
    case 'cancelled': {
      const refusal = pending === 'amend' ? refuseOnEnd('already_cancelled') : { changes: NO_PENDING_REQUEST, events: [] };
      return {
        applies: true,
        execution: null,
        events: ['order.cancelled', ...refusal.events],
        changes: { ...seen, ...ended, ...refusal.changes, status: 'cancelled', cancel_reason: report.reason },
      };
    }
    case 'partial_fill':
    case 'fill': {
      let state;
      try {
        state = applyFill(
          { qty: row.qty, filled_qty: row.filled_qty, fill_notional_cents: BigInt(row.fill_notional_cents), status: row.status },
          { fill_qty: report.fill_qty, fill_price_cents: report.fill_price_cents },
        );
      } catch (error) {
        if (!(error instanceof FillError)) throw error;
        return { applies: false, changes: seen, why: `fill refused: ${error.message}` };
      }
      const changes: Partial<OrderRow> = {
        ...seen,
        status: state.status,
        filled_qty: state.filled_qty,
        fill_notional_cents: state.fill_notional_cents.toString(),
      };
      const execution = {
        fill_qty: report.fill_qty,
        fill_price_cents: report.fill_price_cents,
        exchange_ref: report.exchange_ref,
        executed_at: report.executed_at,
      };
      if (state.status !== 'filled') return { applies: true, execution, events: ['order.executed'], changes };
      const refusal = refuseOnEnd('already_filled');
      return {
        applies: true,
        execution,
        events: ['order.executed', ...refusal.events],
        changes: { ...changes, ...ended, ...refusal.changes },
      };
    }
    case 'replaced': {
      if (!Number.isSafeInteger(report.qty) || report.qty <= row.filled_qty)
        return { applies: false, changes: seen, why: `an amend to qty ${report.qty} with ${row.filled_qty} filled` };
      const answered = row.pending_request_id === report.request_id ? { ...NO_PENDING_REQUEST, next_route_at: null } : {};
      return {
        applies: true,
        execution: null,
        events: ['order.amended'],
        changes: { ...seen, ...answered, qty: report.qty, limit_price_cents: report.limit_price_cents },
      };
    }
    case 'request_refused': {
      const refusal = refusalChanges(report.request, report.reason, report.occurred_at);
      // The refusal of an earlier request (one a later request replaced) is shown, and the later one goes on.
      const changes =
        row.pending_request_id === report.request_id ? { ...refusal, next_route_at: null } : { last_refusal: refusal.last_refusal };
      return { applies: true, execution: null, events: ['order.request_refused'], changes: { ...seen, ...changes } };
    }
  }
}
