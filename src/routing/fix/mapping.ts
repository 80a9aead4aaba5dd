import { isoMillis } from '../../lib/clock.js';
import type { OrderId } from '../../lib/ids.js';
import type { CancelReason, CancelRequestReason, RequestRefusal, TimeInForce } from '../../orders/core/lifecycle.js';
import type { ExecutionReport, OrderForPartner, RejectReason } from '../connector.js';
import type { FixOrderState } from './fix.table.js';
import { centsToPrice, parseQty, priceToCents } from './prices.js';

/**
 * The FIX 4.4 messages of the connector as pure functions: what a NewOrderSingle (35=D), an
 * OrderCancelRequest (35=F) and an OrderCancelReplaceRequest (35=G) carry, and what each ExecutionReport (35=8) means for the report log,
 * one entry per ExecType (150) in EXEC_TYPES. The message bodies are the objects jspurefix encodes
 * (field names of its FIX44.xml dictionary); no I/O here.
 */

/** TimeInForce (59). */
export const TIME_IN_FORCE: Readonly<Record<TimeInForce, string>> = { day: '0', gtc: '1', ioc: '3', fok: '4', gtd: '6' };

/** Side (54). */
export const SIDE: Readonly<Record<'buy' | 'sell', string>> = { buy: '1', sell: '2' };

/** OrdType (40). */
export const ORD_TYPE = { market: '1', limit: '2' } as const;

/** The order as handed over (time in force and expire date absent: a day order handed over by an older version). */
export type FixOrderInput = Omit<OrderForPartner, 'time_in_force' | 'expire_date'> &
  Partial<Pick<OrderForPartner, 'time_in_force' | 'expire_date'>>;

export type FixValue = string | number | FixBody;
export interface FixBody {
  readonly [field: string]: FixValue;
}

/** UTCTimestamp with milliseconds (SendingTime 52, TransactTime 60): `20261124-18:15:16.085`. */
export function fixTimestamp(ms: number): string {
  const iso = isoMillis(ms);
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}-${iso.slice(11, 23)}`;
}

/**
 * NewOrderSingle (35=D). ClOrdID is the order id, so a repeated hand-over is recognised. Account (1)
 * is the order's account (fixed when it was accepted), else the partner's `defaultAccount`
 * (`fix.account`); none when both are null.
 */
export function newOrderSingle(order: FixOrderInput, options: { defaultAccount: string | null; transactTime: number }): FixBody {
  const dot = order.instrument.lastIndexOf('.');
  const instrument: Record<string, string> = { Symbol: order.instrument.slice(0, dot) };
  if (order.isin !== undefined && order.isin !== null) {
    instrument.SecurityID = order.isin;
    instrument.SecurityIDSource = '4'; // ISIN
  }
  instrument.SecurityExchange = order.instrument.slice(dot + 1);
  const timeInForce = order.time_in_force ?? 'day';
  const body: Record<string, FixValue> = { ClOrdID: order.order_id };
  const account = order.account ?? options.defaultAccount;
  if (account !== null) body.Account = account;
  body.Instrument = instrument;
  body.Side = SIDE[order.side];
  body.TransactTime = fixTimestamp(options.transactTime);
  body.OrderQtyData = { OrderQty: order.qty };
  if (order.limit_price_cents === null) {
    body.OrdType = ORD_TYPE.market;
  } else {
    body.OrdType = ORD_TYPE.limit;
    body.Price = centsToPrice(order.limit_price_cents);
  }
  body.TimeInForce = TIME_IN_FORCE[timeInForce];
  if (timeInForce === 'gtd' && order.expire_date !== undefined && order.expire_date !== null)
    body.ExpireDate = order.expire_date.replaceAll('-', '');
  return body;
}

/** OrderCancelRequest (35=F) for an order sent as `newOrder`: its own ClOrdID, OrigClOrdID the order's. */
export function orderCancelRequest(newOrder: FixBody, clOrdId: string, transactTime: number): FixBody {
  const body: Record<string, FixValue> = { OrigClOrdID: String(newOrder.ClOrdID), ClOrdID: clOrdId };
  if (newOrder.Account !== undefined) body.Account = newOrder.Account;
  body.Instrument = newOrder.Instrument as FixBody;
  body.Side = newOrder.Side as string;
  body.TransactTime = fixTimestamp(transactTime);
  body.OrderQtyData = newOrder.OrderQtyData as FixBody;
  return body;
}

/**
 * OrderCancelReplaceRequest (35=G) of the order whose terms at the partner are `current` (its
 * NewOrderSingle as the last Replaced left it): its own ClOrdID, OrigClOrdID the current one, the
 * order's terms with the new quantity and limit.
 */
export function orderCancelReplaceRequest(current: FixBody, clOrdId: string, terms: AmendTerms, transactTime: number): FixBody {
  const body: Record<string, FixValue> = { OrigClOrdID: String(current.ClOrdID), ClOrdID: clOrdId };
  if (current.Account !== undefined) body.Account = current.Account;
  body.Instrument = current.Instrument as FixBody;
  body.Side = current.Side as string;
  body.TransactTime = fixTimestamp(transactTime);
  body.OrderQtyData = { OrderQty: terms.qty };
  body.OrdType = current.OrdType as string;
  if (terms.limit_price_cents !== null) body.Price = centsToPrice(terms.limit_price_cents);
  if (current.TimeInForce !== undefined) body.TimeInForce = current.TimeInForce;
  if (current.ExpireDate !== undefined) body.ExpireDate = current.ExpireDate;
  return body;
}

/** The order's terms at the partner after a Replaced: the ClOrdID, quantity and limit of the amend. */
export function replacedTerms(current: FixBody, clOrdId: string, terms: AmendTerms): FixBody {
  const body: Record<string, FixValue> = { ...current, ClOrdID: clOrdId, OrderQtyData: { OrderQty: terms.qty } };
  if (terms.limit_price_cents !== null) body.Price = centsToPrice(terms.limit_price_cents);
  return body;
}

/** The limit of an order's terms at the partner, in cents (null: a market order). */
export function limitOf(body: FixBody): number | null {
  return typeof body.Price === 'string' ? (priceToCents(body.Price)?.cents ?? null) : null;
}

/** The time in force of an order's terms at the partner (absent: day). */
export function timeInForceOf(body: FixBody): TimeInForce {
  const code = String(body.TimeInForce ?? TIME_IN_FORCE.day);
  return (Object.keys(TIME_IN_FORCE) as TimeInForce[]).find((t) => TIME_IN_FORCE[t] === code) ?? 'day';
}

/** What a cancel asked: its reason. */
export interface CancelTerms {
  readonly request_id: string;
  readonly reason: CancelRequestReason;
}

/** What an amend asked: the order's whole new quantity and limit. */
export interface AmendTerms {
  readonly request_id: string;
  readonly qty: number;
  readonly limit_price_cents: number | null;
}

/**
 * What an ExecutionReport is read against besides the order: the cancel and the amend of the
 * service it may answer (null: none waiting), and the order's time in force.
 */
export interface ReportContext {
  readonly cancel: CancelTerms | null;
  readonly amend: AmendTerms | null;
  readonly timeInForce: TimeInForce;
}

const NO_REQUEST: ReportContext = { cancel: null, amend: null, timeInForce: 'day' };

/** The fields of an ExecutionReport the mapping reads, as text from the wire (no float parsing). */
export interface ExecReportFields {
  readonly execId: string;
  readonly execType: string;
  readonly partnerOrderId: string | null;
  readonly lastQty: string | null;
  readonly lastPx: string | null;
  /** OrderQty (38) and Price (44): the order's terms, which a Replaced confirms; absent: not read. */
  readonly orderQty?: string | null;
  readonly price?: string | null;
  readonly ordRejReason: number | null;
  readonly text: string | null;
  /** TransactTime (60), else SendingTime (52), epoch ms. */
  readonly at: number;
}

/** What the partner has said of an order so far (fix_orders). */
export interface OrderAtPartner {
  readonly order_id: string;
  readonly qty: number;
  readonly state: FixOrderState;
  readonly cum_qty: number;
  readonly report_seq: number;
}

type Draft =
  | { type: 'accepted' }
  | { type: 'fill' | 'partial_fill'; fill_qty: number; fill_price_cents: number }
  | { type: 'rejected'; reason: RejectReason }
  | { type: 'cancelled'; reason: CancelReason; request_id: string | null }
  | { type: 'replaced'; request_id: string; qty: number; limit_price_cents: number | null };

/** A handler returns the reports an ExecutionReport adds, or why it adds none. */
type Handler = (order: OrderAtPartner, er: ExecReportFields, context: ReportContext) => Draft[] | { ignored: string };

/** An ioc or fok order's rest, cancelled by the partner on its own, is `unfilled`. */
const settlesAtOnce = (context: ReportContext) => context.timeInForce === 'ioc' || context.timeInForce === 'fok';

/** Canceled: the answer to the service's cancel when one waits, else the partner's own cancel. */
function canceled(_order: OrderAtPartner, _er: ExecReportFields, context: ReportContext): Draft[] {
  if (context.cancel !== null) return [{ type: 'cancelled', reason: context.cancel.reason, request_id: context.cancel.request_id }];
  return [{ type: 'cancelled', reason: settlesAtOnce(context) ? 'unfilled' : 'partner', request_id: null }];
}

/** Expired: the exchange ended the order at the end of its time in force (for ioc and fok, at once). */
function expired(_order: OrderAtPartner, _er: ExecReportFields, context: ReportContext): Draft[] {
  return [{ type: 'cancelled', reason: settlesAtOnce(context) ? 'unfilled' : 'expired', request_id: null }];
}

/** Replaced: the amend took effect, with the terms the partner reports (else the ones asked). */
function replaced(order: OrderAtPartner, er: ExecReportFields, context: ReportContext): Draft[] | { ignored: string } {
  const amend = context.amend;
  if (amend === null) return { ignored: 'Replaced without an amend of this service waiting' };
  const qty = er.orderQty === undefined || er.orderQty === null ? amend.qty : parseQty(er.orderQty);
  const price = er.price === undefined || er.price === null ? amend.limit_price_cents : (priceToCents(er.price)?.cents ?? null);
  if (qty === null || qty <= order.cum_qty) return { ignored: `Replaced to OrderQty (38) ${er.orderQty} with ${order.cum_qty} filled` };
  return [{ type: 'replaced', request_id: amend.request_id, qty, limit_price_cents: price }];
}

const informational =
  (what: string): Handler =>
  () => ({ ignored: what });

function trade(order: OrderAtPartner, er: ExecReportFields): Draft[] | { ignored: string } {
  const qty = parseQty(er.lastQty);
  const price = er.lastPx === null ? null : priceToCents(er.lastPx);
  if (qty === null || qty <= 0) return { ignored: `Trade without a usable LastQty (32): ${er.lastQty}` };
  if (price === null || price.cents < 1) return { ignored: `Trade without a usable LastPx (31): ${er.lastPx}` };
  if (order.cum_qty + qty > order.qty) return { ignored: `Trade of ${qty} would fill ${order.cum_qty + qty} of ${order.qty}` };
  return [{ type: order.cum_qty + qty === order.qty ? 'fill' : 'partial_fill', fill_qty: qty, fill_price_cents: price.cents }];
}

function rejected(order: OrderAtPartner, er: ExecReportFields): Draft[] | { ignored: string } {
  // A duplicate refused once the partner acknowledged the order is a copy of it (a resend the gateway
  // did not recognise as one): the order it copies, with the same ClOrdID, stands. Before any
  // acknowledgement it can only be the order itself, which then fails like any refused order.
  if (er.ordRejReason === 6 && order.state !== 'sent')
    return { ignored: 'Rejected as a duplicate order (OrdRejReason 6): the order it copies stands' };
  // After a fill the order can no longer fail: the partner refusing the rest ends it as cancelled.
  if (order.cum_qty > 0) return [{ type: 'cancelled', reason: 'partner', request_id: null }];
  return [{ type: 'rejected', reason: rejectReason(er.ordRejReason, er.text) }];
}

/**
 * ExecType (150) -> what it adds to the report log. Types a FIX 4.4 partner sends for information
 * only add nothing; Trade Correct and Trade Cancel are not supported yet and add nothing.
 */
export const EXEC_TYPES: Readonly<Record<string, { readonly name: string; readonly handle: Handler }>> = {
  '0': {
    name: 'New',
    handle: (order) => (order.state === 'sent' ? [{ type: 'accepted' }] : { ignored: 'New for an order already accepted' }),
  },
  F: { name: 'Trade', handle: trade },
  '4': { name: 'Canceled', handle: canceled },
  C: { name: 'Expired', handle: expired },
  '5': { name: 'Replaced', handle: replaced },
  '8': { name: 'Rejected', handle: rejected },
  A: { name: 'Pending New', handle: informational('Pending New') },
  '6': { name: 'Pending Cancel', handle: informational('Pending Cancel') },
  E: { name: 'Pending Replace', handle: informational('Pending Replace') },
  I: { name: 'Order Status', handle: informational('Order Status') },
  '3': { name: 'Done for Day', handle: informational('Done for Day') },
  D: { name: 'Restated', handle: informational('Restated') },
  '9': { name: 'Suspended', handle: informational('Suspended') },
  '7': { name: 'Stopped', handle: informational('Stopped') },
  B: { name: 'Calculated', handle: informational('Calculated') },
  G: { name: 'Trade Correct', handle: informational('Trade Correct (not supported yet)') },
  H: { name: 'Trade Cancel', handle: informational('Trade Cancel (not supported yet)') },
};

export type ExecutionReportOutcome = { readonly reports: ExecutionReport[]; readonly order: OrderAtPartner } | { readonly ignored: string };

/**
 * What one ExecutionReport adds to an order's report log, and the order afterwards. Reports are
 * numbered after `order.report_seq`; `reportIdPrefix` makes their ids globally unique. The first
 * report of an order is always `accepted` or `rejected`: a Trade or a Canceled that arrives first
 * (some gateways send no New) is preceded by an `accepted` of the same time. Nothing follows a final
 * report.
 */
export function applyExecutionReport(
  order: OrderAtPartner,
  er: ExecReportFields,
  reportIdPrefix: string,
  context: ReportContext = NO_REQUEST,
): ExecutionReportOutcome {
  if (order.state === 'filled' || order.state === 'cancelled' || order.state === 'rejected')
    return { ignored: `order is already ${order.state}` };
  const rule = EXEC_TYPES[er.execType];
  if (rule === undefined) return { ignored: `unknown ExecType ${er.execType}` };
  const drafts = rule.handle(order, er, context);
  if (!Array.isArray(drafts)) return drafts;
  const first = drafts[0];
  if (order.state === 'sent' && first !== undefined && first.type !== 'accepted' && first.type !== 'rejected')
    drafts.unshift({ type: 'accepted' });

  let state: FixOrderState = order.state;
  let cum = order.cum_qty;
  let qty = order.qty;
  let seq = order.report_seq;
  const occurredAt = isoMillis(er.at);
  const reports: ExecutionReport[] = [];
  for (const draft of drafts) {
    seq += 1;
    const base = {
      report_id: `${reportIdPrefix}:${order.order_id}:${seq}`,
      order_id: order.order_id as OrderId,
      seq,
      occurred_at: occurredAt,
    };
    switch (draft.type) {
      case 'accepted':
        state = 'accepted';
        reports.push({ ...base, type: 'accepted' });
        break;
      case 'rejected':
        state = 'rejected';
        reports.push({ ...base, type: 'rejected', reason: draft.reason });
        break;
      case 'cancelled':
        state = 'cancelled';
        reports.push({
          ...base,
          type: 'cancelled',
          cancelled_qty: qty - cum,
          cum_qty: cum,
          reason: draft.reason,
          request_id: draft.request_id,
        });
        break;
      case 'replaced':
        qty = draft.qty;
        reports.push({
          ...base,
          type: 'replaced',
          request_id: draft.request_id,
          qty,
          limit_price_cents: draft.limit_price_cents,
          cum_qty: cum,
          leaves_qty: qty - cum,
        });
        break;
      case 'fill':
      case 'partial_fill':
        cum += draft.fill_qty;
        state = draft.type === 'fill' ? 'filled' : 'accepted';
        reports.push({
          ...base,
          type: draft.type,
          fill_qty: draft.fill_qty,
          fill_price_cents: draft.fill_price_cents,
          cum_qty: cum,
          leaves_qty: qty - cum,
          exchange_ref: er.execId,
          executed_at: occurredAt,
        });
        break;
    }
  }
  return { reports, order: { ...order, state, qty, cum_qty: cum, report_seq: seq } };
}

/**
 * OrdRejReason (103) and Text (58) -> the order's failure reason. The first rule that matches wins;
 * docs/fix.md shows this table.
 */
export const REJECT_REASON_RULES: readonly {
  readonly when: string;
  readonly ordRejReason?: number;
  readonly text?: RegExp;
  readonly reason: RejectReason;
}[] = [
  { when: 'Text speaks of a suspended or halted instrument', text: /suspen|halt/i, reason: 'instrument_suspended' },
  {
    when: 'Text speaks of funds, cash, provision, balance or buying power',
    text: /insufficient|fund|cash|provision|solde|balance|buying power/i,
    reason: 'insufficient_funds',
  },
  { when: 'OrdRejReason 3 (order exceeds limit)', ordRejReason: 3, reason: 'insufficient_funds' },
  { when: 'anything else', reason: 'sgi_rejected' },
];

/**
 * CxlRejResponseTo (434) of an OrderCancelReject: `1` answers an OrderCancelRequest, `2` an
 * OrderCancelReplaceRequest; null when absent or another value (the ClOrdID then decides).
 */
export function rejectedRequest(cxlRejResponseTo: string | null): 'cancel' | 'amend' | null {
  return cxlRejResponseTo === '1' ? 'cancel' : cxlRejResponseTo === '2' ? 'amend' : null;
}

export function rejectReason(ordRejReason: number | null, text: string | null): RejectReason {
  for (const rule of REJECT_REASON_RULES) {
    if (rule.ordRejReason !== undefined && rule.ordRejReason !== ordRejReason) continue;
    if (rule.text !== undefined && (text === null || !rule.text.test(text))) continue;
    return rule.reason;
  }
  return 'sgi_rejected';
}

/**
 * Why a cancel or an amend was refused (OrderCancelReject 35=9, or a Reject / BusinessMessageReject
 * naming the request), given what the report log already says of the order. `unknown_order` only
 * when this connector never sent the order. A refusal only refuses the request: whatever its
 * CxlRejReason (102), even 1 (unknown order) for an order the partner has not acknowledged yet, the
 * order stays as its ExecutionReports make it (`partner_refused`).
 */
export function requestRefusal(request: 'cancel' | 'amend', order: OrderAtPartner | undefined): RequestRefusal {
  if (order === undefined) return 'unknown_order';
  if (order.state === 'filled') return 'already_filled';
  if (order.state === 'rejected') return 'already_rejected';
  if (order.state === 'cancelled' && request === 'amend') return 'already_cancelled';
  return 'partner_refused';
}
