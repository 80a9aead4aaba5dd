// The FIX connector's stored rows (fix.table.ts) read back as the connector's terms and answers.
import type { ExecutionReport, SubmitResult } from '../connector.js';
import type { FixOrderRow, FixRequestRow } from './fix.table.js';
import type { AmendTerms, CancelTerms, FixBody, OrderAtPartner } from './mapping.js';

export const bodyOf = (row: FixOrderRow) => JSON.parse(row.body) as FixBody;

export function cancelTerms(request: FixRequestRow): CancelTerms {
  return { request_id: request.cl_ord_id, ...(JSON.parse(request.terms ?? '{"reason":"requested"}') as Omit<CancelTerms, 'request_id'>) };
}

export function amendTerms(request: FixRequestRow): AmendTerms {
  return { request_id: request.cl_ord_id, ...(JSON.parse(request.terms ?? '{}') as Omit<AmendTerms, 'request_id'>) };
}

export function atPartner(row: FixOrderRow): OrderAtPartner {
  return { order_id: row.order_id, qty: row.qty, state: row.state, cum_qty: row.cum_qty, report_seq: row.report_seq };
}

export function submitResult(report: ExecutionReport): SubmitResult | null {
  if (report.type === 'accepted') return { status: 'accepted', report };
  if (report.type === 'rejected') return { status: 'rejected', report };
  return null;
}
