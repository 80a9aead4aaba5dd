import type { Kysely } from 'kysely';
import type { OrderId } from '../../lib/ids.js';
import type { Database } from '../../storage/schema.js';
import type {
  AmendResult,
  ApplyToOrders,
  CancelledReport,
  CancelResult,
  ExecutionReport,
  ReplacedReport,
  SubmitResult,
} from '../connector.js';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../lib/clock.js';
import type { RefusedReason } from './inbound-check.js';
import {
  appendReportsAtCommit,
  claimExecId,
  findOrderAtPartner,
  findRequest,
  findRequestBySeq,
  requestsOfOrder,
  setRequestState,
  updateOrderAtPartner,
} from './fix.repository.js';
import type { FixOrderRow, FixRequestRow } from './fix.table.js';
import {
  applyExecutionReport,
  rejectedRequest,
  replacedTerms,
  requestRefusal,
  timeInForceOf,
  type ExecReportFields,
  type ReportContext,
} from './mapping.js';
import type { PartnerMessage } from './partner-message.js';
import type { Waiters } from './waiters.js';
import { amendTerms, atPartner, bodyOf, cancelTerms, submitResult } from './fix-rows.js';

export interface ReportWriterDeps {
  readonly partnerId: string;
  readonly clock: Clock;
  readonly log: FastifyBaseLogger;
  /** Counts a partner's message that was not applied (here: a report for an order this service did not send). */
  readonly onRefused?: (reason: RefusedReason) => void;
  /**
   * Applies the reports written to the log to their orders, in the same transaction (the router's):
   * an answer or a fill reaches its order with the commit that records it, without waiting for the
   * log's reader. Without it, the log's reader alone applies them.
   */
  readonly applyToOrders?: ApplyToOrders;
}

/** The order a partner's message concerns at the partner, the request it names, and the order's requests. */
interface Concerned {
  readonly row: FixOrderRow;
  readonly named: FixRequestRow;
  readonly requests: readonly FixRequestRow[];
}

/** The callers waiting for the partner's answer: submits by order id, cancels by order id, amends by request id. */
export interface AnswerWaiters {
  readonly submits: Waiters<SubmitResult>;
  readonly cancels: Waiters<CancelResult>;
  readonly amends: Waiters<AmendResult>;
}

/**
 * The inbound half of the FIX connector: the partner's ExecutionReports, OrderCancelRejects and
 * Rejects, each applied in the transaction that commits its sequence number, become the connector's
 * report log (fix_reports) and the state of its orders and requests; once committed, the callers
 * waiting for them are answered.
 */
export class ReportWriter {
  readonly #name: string;
  readonly #deps: ReportWriterDeps;
  readonly #waiting: AnswerWaiters;

  constructor(name: string, deps: ReportWriterDeps, waiting: AnswerWaiters) {
    this.#name = name;
    this.#deps = deps;
    this.#waiting = waiting;
  }

  /**
   * Applies one of the partner's messages in `trx` (the session commits the partner's sequence
   * number in the same transaction); returns what to tell waiting callers once it is committed.
   */
  async apply(trx: Kysely<Database>, message: PartnerMessage): Promise<(() => void) | undefined> {
    switch (message.kind) {
      case 'execution_report':
        return this.#executionReport(trx, message.clOrdId, message.origClOrdId, message.report);
      case 'cancel_reject': {
        const named = message.clOrdId === null ? undefined : await findRequest(trx, this.#deps.partnerId, message.clOrdId);
        const request = named ?? (await this.#pendingRequest(trx, message.origClOrdId, rejectedRequest(message.cxlRejResponseTo)));
        if (request === undefined || request.kind === 'new' || request.state !== 'pending') {
          this.#deps.log.warn(
            { partner_id: this.#deps.partnerId, cl_ord_id: message.clOrdId, orig_cl_ord_id: message.origClOrdId, text: message.text },
            'OrderCancelReject of no waiting request; ignored',
          );
          return undefined;
        }
        return this.#requestRefused(trx, request, message.cxlRejReason, message.text);
      }
      case 'reject':
        return this.#rejected(trx, message);
      case 'other':
        this.#deps.log.debug(
          { partner_id: this.#deps.partnerId, msg_type: message.msgType },
          'FIX message of a type the connector does not use',
        );
        return undefined;
    }
  }

  /** The request of kind `kind` still waiting on the order that ClOrdID `orderClOrdId` names (a reject that names no request of its own). */
  async #pendingRequest(
    trx: Kysely<Database>,
    orderClOrdId: string | null,
    kind: 'cancel' | 'amend' | null,
  ): Promise<FixRequestRow | undefined> {
    const named = orderClOrdId === null || kind === null ? undefined : await findRequest(trx, this.#deps.partnerId, orderClOrdId);
    if (named === undefined) return undefined;
    return (await requestsOfOrder(trx, this.#deps.partnerId, named.order_id))
      .filter((r) => r.kind === kind && r.state === 'pending')
      .at(-1);
  }

  /**
   * The order an ExecutionReport concerns, the request its ClOrdID names, and all the order's
   * requests. A ClOrdID is the order's id (its NewOrderSingle) or a cancel's or an amend's id.
   */
  async #orderOf(trx: Kysely<Database>, clOrdId: string | null, origClOrdId: string | null): Promise<Concerned | null> {
    const { partnerId } = this.#deps;
    for (const id of [clOrdId, origClOrdId]) {
      if (id === null) continue;
      let row = await findOrderAtPartner(trx, partnerId, id);
      if (row === undefined) {
        const request = await findRequest(trx, partnerId, id);
        if (request === undefined) continue;
        row = await findOrderAtPartner(trx, partnerId, request.order_id);
        if (row === undefined) return null;
      }
      const requests = await requestsOfOrder(trx, partnerId, row.order_id);
      const named = requests.find((r) => r.cl_ord_id === id);
      if (named !== undefined) return { row, named, requests };
    }
    return null;
  }

  /**
   * The cancel and the amend an ExecutionReport may answer: the one its ClOrdID names, else the
   * latest still waiting (gateways differ in which ClOrdID they echo).
   */
  #context(row: FixOrderRow, named: FixRequestRow | null, requests: readonly FixRequestRow[]): ReportContext {
    const waiting = requests.filter((r) => r.state === 'pending');
    const pick = (kind: 'cancel' | 'amend') =>
      named?.kind === kind && named.state === 'pending' ? named : waiting.filter((r) => r.kind === kind).at(-1);
    const cancel = pick('cancel');
    const amend = pick('amend');
    return {
      cancel: cancel === undefined ? null : cancelTerms(cancel),
      amend: amend === undefined ? null : amendTerms(amend),
      timeInForce: timeInForceOf(bodyOf(row)),
    };
  }

  async #executionReport(
    trx: Kysely<Database>,
    clOrdId: string | null,
    origClOrdId: string | null,
    er: ExecReportFields,
  ): Promise<(() => void) | undefined> {
    const { partnerId, log, clock } = this.#deps;
    const found = await this.#orderOf(trx, clOrdId, origClOrdId);
    if (found === null) {
      log.warn(
        { partner_id: partnerId, cl_ord_id: clOrdId, orig_cl_ord_id: origClOrdId, exec_id: er.execId, exec_type: er.execType },
        'ExecutionReport for an order this service did not send; ignored',
      );
      return () => this.#deps.onRefused?.('unknown_order');
    }
    const { row, named, requests } = found;
    const now = clock.now().getTime();
    if (er.execId !== '' && !(await claimExecId(trx, partnerId, row.order_id, er.execId, now))) {
      log.info(
        { partner_id: partnerId, order_id: row.order_id, exec_id: er.execId },
        'ExecutionReport already applied (same ExecID); ignored',
      );
      return undefined;
    }
    // A Rejected that names a cancel or an amend still waiting refuses that request, as an
    // OrderCancelReject would (some gateways answer a refused replace so): the order lives on.
    if (er.execType === '8' && named.kind !== 'new' && named.state === 'pending') return this.#requestRefused(trx, named, null, er.text);
    return this.#apply(trx, { row, named, requests }, er);
  }

  /** Applies `er` to the order; `concerned.requests` are the order's requests as they stood before. */
  async #apply(trx: Kysely<Database>, concerned: Concerned, er: ExecReportFields): Promise<(() => void) | undefined> {
    const { partnerId, log, clock } = this.#deps;
    const { row, named, requests } = concerned;
    const context = this.#context(row, named, requests);
    const outcome = applyExecutionReport(atPartner(row), er, this.#name, context);
    if ('ignored' in outcome) {
      log.info(
        { partner_id: partnerId, order_id: row.order_id, exec_type: er.execType, exec_id: er.execId, why: outcome.ignored },
        'ExecutionReport adds no report',
      );
      return undefined;
    }
    appendReportsAtCommit(trx, partnerId, outcome.reports);
    const applied = await this.#deps.applyToOrders?.(trx, outcome.reports);
    const replaced = outcome.reports.find((r): r is ReplacedReport => r.type === 'replaced');
    await updateOrderAtPartner(trx, partnerId, row.order_id, {
      state: outcome.order.state,
      qty: outcome.order.qty,
      ...(replaced === undefined
        ? {}
        : {
            body: JSON.stringify(
              replacedTerms(bodyOf(row), replaced.request_id, {
                request_id: replaced.request_id,
                qty: replaced.qty,
                limit_price_cents: replaced.limit_price_cents,
              }),
            ),
          }),
      cum_qty: outcome.order.cum_qty,
      report_seq: outcome.order.report_seq,
      partner_order_id: er.partnerOrderId ?? row.partner_order_id,
      updated_at: clock.now().getTime(),
    });
    const first = outcome.reports.find((r) => r.seq === 1);
    const cancelled = outcome.reports.find((r): r is CancelledReport => r.type === 'cancelled');
    if (first !== undefined) await setRequestState(trx, partnerId, row.order_id, first.type === 'rejected' ? 'refused' : 'answered');
    if (cancelled?.request_id != null) await setRequestState(trx, partnerId, cancelled.request_id, 'answered');
    if (replaced !== undefined) await setRequestState(trx, partnerId, replaced.request_id, 'answered');
    // An end refuses every request still waiting: its final report says so in the log.
    const ended = outcome.order.state === 'filled' || outcome.order.state === 'rejected' || outcome.order.state === 'cancelled';
    const answered = new Set([cancelled?.request_id, replaced?.request_id]);
    const refusedByEnd = ended ? requests.filter((r) => r.kind !== 'new' && r.state === 'pending' && !answered.has(r.cl_ord_id)) : [];
    for (const request of refusedByEnd) await setRequestState(trx, partnerId, request.cl_ord_id, 'refused');
    return () => {
      applied?.();
      const result = first === undefined ? null : submitResult(first);
      if (result !== null) this.#waiting.submits.resolve(row.order_id, result);
      if (cancelled !== undefined) this.#waiting.cancels.resolve(row.order_id, { status: 'cancelled', report: cancelled });
      else if (ended) this.#waiting.cancels.resolve(row.order_id, { status: 'refused', reason: requestRefusal('cancel', outcome.order) });
      if (replaced !== undefined) this.#waiting.amends.resolve(replaced.request_id, { status: 'replaced', report: replaced });
      for (const request of refusedByEnd)
        if (request.kind === 'amend')
          this.#waiting.amends.resolve(request.cl_ord_id, { status: 'refused', reason: requestRefusal('amend', outcome.order) });
    };
  }

  /**
   * The partner refused a cancel or an amend. While the order is open the refusal goes to the log as
   * a `request_refused` report, and a caller still waiting is told `pending` (it finds the refusal
   * there), so that the answer cannot be lost between a caller that gives up and one that listens.
   * When the order already ended, its final report refuses the request by itself.
   */
  async #requestRefused(
    trx: Kysely<Database>,
    request: FixRequestRow,
    cxlRejReason: number | null,
    text: string | null,
  ): Promise<(() => void) | undefined> {
    const { partnerId, log, clock } = this.#deps;
    const kind = request.kind === 'amend' ? 'amend' : 'cancel';
    const row = await findOrderAtPartner(trx, partnerId, request.order_id);
    await setRequestState(trx, partnerId, request.cl_ord_id, 'refused');
    const reason = requestRefusal(kind, row === undefined ? undefined : atPartner(row));
    log.info(
      {
        partner_id: partnerId,
        order_id: request.order_id,
        request_id: request.cl_ord_id,
        request: kind,
        reason,
        cxl_rej_reason: cxlRejReason,
        text,
      },
      'the partner refused a request',
    );
    let result: CancelResult | AmendResult = { status: 'refused', reason };
    let applied: (() => void) | undefined;
    if (row !== undefined && row.state === 'accepted') {
      const seq = row.report_seq + 1;
      const occurredAt = new Date(clock.now().getTime()).toISOString();
      const report: ExecutionReport = {
        report_id: `${this.#name}:${row.order_id}:${seq}`,
        order_id: row.order_id as OrderId,
        seq,
        occurred_at: occurredAt,
        type: 'request_refused',
        request_id: request.cl_ord_id,
        request: kind,
        reason,
      };
      appendReportsAtCommit(trx, partnerId, [report]);
      await updateOrderAtPartner(trx, partnerId, row.order_id, { report_seq: seq, updated_at: clock.now().getTime() });
      applied = await this.#deps.applyToOrders?.(trx, [report]);
      result = { status: 'pending' };
    }
    return () => {
      applied?.();
      if (kind === 'cancel') this.#waiting.cancels.resolve(request.order_id, result as CancelResult);
      else this.#waiting.amends.resolve(request.cl_ord_id, result as AmendResult);
    };
  }

  /** A Reject or BusinessMessageReject of one of the connector's messages: the order or the cancel is refused. */
  async #rejected(trx: Kysely<Database>, message: Extract<PartnerMessage, { kind: 'reject' }>): Promise<(() => void) | undefined> {
    const { partnerId, log } = this.#deps;
    const request =
      (message.refSeqNum === null ? undefined : await findRequestBySeq(trx, partnerId, message.refSeqNum)) ??
      (message.refId === null ? undefined : await findRequest(trx, partnerId, message.refId));
    log.warn(
      {
        partner_id: partnerId,
        level: message.level,
        ref_seq_num: message.refSeqNum,
        ref_msg_type: message.refMsgType,
        text: message.text,
        cl_ord_id: request?.cl_ord_id,
      },
      'the partner rejected a message',
    );
    if (request === undefined || request.state !== 'pending') return undefined;
    if (request.kind !== 'new') return this.#requestRefused(trx, request, null, message.text);
    const row = await findOrderAtPartner(trx, partnerId, request.order_id);
    if (row === undefined) return undefined;
    const requests = await requestsOfOrder(trx, partnerId, row.order_id);
    const refusal: ExecReportFields = {
      execId: '',
      execType: '8',
      partnerOrderId: null,
      lastQty: null,
      lastPx: null,
      ordRejReason: null,
      text: message.text,
      at: this.#deps.clock.now().getTime(),
    };
    return this.#apply(trx, { row, named: request, requests }, refusal);
  }
}
