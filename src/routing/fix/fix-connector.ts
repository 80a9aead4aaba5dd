import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from '../../lib/clock.js';
import type { OrderId } from '../../lib/ids.js';
import type { Database } from '../../storage/schema.js';
import {
  ConnectorUnavailableError,
  type CancelledReport,
  type CancelResult,
  type ExecutionReport,
  type OrderForPartner,
  type PartnerConnector,
  type ReportBatch,
  type SubmitResult,
} from '../connector.js';
import {
  appendReports,
  claimExecId,
  findOrderAtPartner,
  findRequest,
  findRequestBySeq,
  insertOrderAtPartner,
  insertRequest,
  reportsAfter,
  reportsOfOrder,
  requestsOfOrder,
  setRequestState,
  updateOrderAtPartner,
} from './fix.repository.js';
import type { FixOrderRow } from './fix.table.js';
import { applyExecutionReport, cancelRefusal, newOrderSingle, orderCancelRequest, type ExecReportFields, type FixBody, type OrderAtPartner } from './mapping.js';
import type { PartnerMessage } from './partner-message.js';
import type { FixSessionRunner, PartnerFixConfig } from './session-runner.js';
import { KeyedMutex, Waiters } from './waiters.js';

export interface FixConnectorDeps {
  readonly partnerId: string;
  readonly db: Kysely<Database>;
  readonly clock: Clock;
  readonly log: FastifyBaseLogger;
  readonly loadPartner: () => Promise<PartnerFixConfig | null>;
  /** How long submit and cancel wait for the partner's answer before reporting it unavailable. */
  readonly answerTimeoutMs: number;
}

function atPartner(row: FixOrderRow): OrderAtPartner {
  return { order_id: row.order_id, qty: row.qty, state: row.state, cum_qty: row.cum_qty, report_seq: row.report_seq };
}

function submitResult(report: ExecutionReport): SubmitResult | null {
  if (report.type === 'accepted') return { status: 'accepted', report };
  if (report.type === 'rejected') return { status: 'rejected', report };
  return null;
}

/**
 * The PartnerConnector of an SGI reached over FIX 4.4 (the `fix` connector). Orders go out as
 * NewOrderSingle (ClOrdID = the order id) and cancels as OrderCancelRequest through the partner's
 * durable session; the partner's ExecutionReports, OrderCancelRejects and Rejects become the report
 * log in the database (fix_reports), which `reports` reads and which survives restarts.
 *
 * `submit` and `cancel` resolve when the partner's answer is committed. A hand-over that is recorded
 * is never sent twice: a repeated submit (after a time-out or a crash) returns the first answer, or
 * waits for it. In a process that does not run the session (`runner` null), both report the partner
 * unavailable and the process that holds the session does the work.
 */
export class FixConnector implements PartnerConnector {
  readonly name: string;
  readonly #deps: FixConnectorDeps;
  readonly #runner: FixSessionRunner | null;
  readonly #submits = new Waiters<SubmitResult>();
  readonly #cancels = new Waiters<CancelResult>();
  readonly #mutex = new KeyedMutex();

  constructor(deps: FixConnectorDeps, runner: FixSessionRunner | null) {
    this.name = `fix:${deps.partnerId}`;
    this.#deps = deps;
    this.#runner = runner;
  }

  #unavailable(message: string, cause?: unknown): ConnectorUnavailableError {
    return new ConnectorUnavailableError(this.name, message, cause === undefined ? {} : { cause });
  }

  #session() {
    const session = this.#runner?.session ?? null;
    if (session === null) throw this.#unavailable(this.#runner === null ? 'the FIX session runs in another process' : 'the FIX session is not logged on');
    return session;
  }

  async submit(order: OrderForPartner): Promise<SubmitResult> {
    return this.#mutex.run(order.order_id, async () => {
      const { partnerId, db, clock, answerTimeoutMs } = this.#deps;
      const waiter = this.#submits.wait(order.order_id, answerTimeoutMs, () => this.#unavailable(`no answer to order ${order.order_id} yet`));
      try {
        const existing = await findOrderAtPartner(db, partnerId, order.order_id);
        if (existing !== undefined) {
          // Handed over before: the partner's first answer, once there is one.
          const first = (await reportsOfOrder(db, partnerId, order.order_id))[0];
          const result = first === undefined ? null : submitResult(first);
          if (result !== null) {
            waiter.cancel();
            return result;
          }
          return await waiter.promise;
        }
        const session = this.#session();
        const partner = await this.#deps.loadPartner();
        const body = newOrderSingle(order, { account: partner?.settings.account ?? null, transactTime: clock.now().getTime() });
        await session.sendApplication('D', body, order.order_id, async (trx, seq, at) => {
          await insertOrderAtPartner(trx, { partner_id: partnerId, order_id: order.order_id, side: order.side, qty: order.qty, instrument: order.instrument, body: JSON.stringify(body), state: 'sent', cum_qty: 0, report_seq: 0, partner_order_id: null, created_at: at, updated_at: at });
          await insertRequest(trx, { partner_id: partnerId, cl_ord_id: order.order_id, order_id: order.order_id, kind: 'new', seq, state: 'pending', created_at: at });
        }).catch((error: unknown) => {
          throw this.#unavailable('the order could not be recorded for sending', error);
        });
        return await waiter.promise;
      } catch (error) {
        waiter.cancel();
        throw error;
      }
    });
  }

  async cancel(orderId: OrderId): Promise<CancelResult> {
    return this.#mutex.run(`cancel:${orderId}`, async () => {
      const { partnerId, db, clock, answerTimeoutMs } = this.#deps;
      const waiter = this.#cancels.wait(orderId, answerTimeoutMs, () => this.#unavailable(`no answer to the cancel of ${orderId} yet`));
      try {
        const row = await findOrderAtPartner(db, partnerId, orderId);
        const final = await this.#finalAnswer(row);
        if (final !== null) {
          waiter.cancel();
          return final;
        }
        const requests = await requestsOfOrder(db, partnerId, orderId);
        if (!requests.some((r) => r.kind === 'cancel' && r.state === 'pending')) {
          const session = this.#session();
          const clOrdId = `${orderId}-C${requests.filter((r) => r.kind === 'cancel').length + 1}`;
          const body = orderCancelRequest(JSON.parse((row as FixOrderRow).body) as FixBody, clOrdId, clock.now().getTime());
          await session
            .sendApplication('F', body, clOrdId, (trx, seq, at) => insertRequest(trx, { partner_id: partnerId, cl_ord_id: clOrdId, order_id: orderId, kind: 'cancel', seq, state: 'pending', created_at: at }))
            .catch((error: unknown) => {
              throw this.#unavailable('the cancel could not be recorded for sending', error);
            });
        }
        return await waiter.promise;
      } catch (error) {
        waiter.cancel();
        throw error;
      }
    });
  }

  /** The answer to a cancel when the partner need not be asked: it never had the order, or the order is final. */
  async #finalAnswer(row: FixOrderRow | undefined): Promise<CancelResult | null> {
    if (row === undefined) return { status: 'refused', reason: 'unknown_order' };
    if (row.state === 'filled') return { status: 'refused', reason: 'already_filled' };
    if (row.state === 'rejected') return { status: 'refused', reason: 'already_rejected' };
    if (row.state === 'cancelled') {
      const report = (await reportsOfOrder(this.#deps.db, this.#deps.partnerId, row.order_id)).find((r): r is CancelledReport => r.type === 'cancelled');
      if (report !== undefined) return { status: 'cancelled', report };
    }
    return null;
  }

  async reports(since: string | null, options?: { limit?: number }): Promise<ReportBatch> {
    const after = since !== null && /^\d{1,15}$/.test(since) ? Number(since) : 0;
    const rows = await reportsAfter(this.#deps.db, this.#deps.partnerId, after, options?.limit ?? 500);
    const last = rows[rows.length - 1];
    return { reports: rows.map((r) => r.report), position: last === undefined ? since : String(last.pos) };
  }

  /**
   * Applies one of the partner's messages in `trx` (the session commits the partner's sequence
   * number in the same transaction); returns what to tell waiting callers once it is committed.
   */
  async applyInbound(trx: Kysely<Database>, message: PartnerMessage): Promise<(() => void) | undefined> {
    switch (message.kind) {
      case 'execution_report':
        return this.#executionReport(trx, message.clOrdId, message.origClOrdId, message.report);
      case 'cancel_reject': {
        const request = message.clOrdId === null ? undefined : await findRequest(trx, this.#deps.partnerId, message.clOrdId);
        const orderId = request?.order_id ?? message.origClOrdId;
        if (orderId === null || (request !== undefined && request.state !== 'pending')) return undefined;
        return this.#cancelRefused(trx, orderId, request?.cl_ord_id ?? null, message.cxlRejReason, message.text);
      }
      case 'reject':
        return this.#rejected(trx, message);
      case 'other':
        this.#deps.log.debug({ partner_id: this.#deps.partnerId, msg_type: message.msgType }, 'FIX message of a type the connector does not use');
        return undefined;
    }
  }

  async #orderOf(trx: Kysely<Database>, clOrdId: string | null, origClOrdId: string | null): Promise<{ orderId: string; cancelClOrdId: string | null } | null> {
    for (const id of [clOrdId, origClOrdId]) {
      if (id === null) continue;
      const request = await findRequest(trx, this.#deps.partnerId, id);
      if (request !== undefined) return { orderId: request.order_id, cancelClOrdId: request.kind === 'cancel' ? request.cl_ord_id : null };
    }
    return null;
  }

  async #executionReport(trx: Kysely<Database>, clOrdId: string | null, origClOrdId: string | null, er: ExecReportFields): Promise<(() => void) | undefined> {
    const { partnerId, log, clock } = this.#deps;
    const found = await this.#orderOf(trx, clOrdId, origClOrdId);
    const row = found === null ? undefined : await findOrderAtPartner(trx, partnerId, found.orderId);
    if (found === null || row === undefined) {
      log.warn({ partner_id: partnerId, cl_ord_id: clOrdId, exec_id: er.execId }, 'ExecutionReport for an order this service did not send; ignored');
      return undefined;
    }
    const now = clock.now().getTime();
    if (er.execId !== '' && !(await claimExecId(trx, partnerId, row.order_id, er.execId, now))) {
      log.info({ partner_id: partnerId, order_id: row.order_id, exec_id: er.execId }, 'ExecutionReport already applied (same ExecID); ignored');
      return undefined;
    }
    return this.#apply(trx, row, er, found.cancelClOrdId);
  }

  async #apply(trx: Kysely<Database>, row: FixOrderRow, er: ExecReportFields, cancelClOrdId: string | null): Promise<(() => void) | undefined> {
    const { partnerId, log, clock } = this.#deps;
    const outcome = applyExecutionReport(atPartner(row), er, this.name);
    if ('ignored' in outcome) {
      log.info({ partner_id: partnerId, order_id: row.order_id, exec_type: er.execType, exec_id: er.execId, why: outcome.ignored }, 'ExecutionReport adds no report');
      return undefined;
    }
    await appendReports(trx, partnerId, outcome.reports);
    await updateOrderAtPartner(trx, partnerId, row.order_id, {
      state: outcome.order.state,
      cum_qty: outcome.order.cum_qty,
      report_seq: outcome.order.report_seq,
      partner_order_id: er.partnerOrderId ?? row.partner_order_id,
      updated_at: clock.now().getTime(),
    });
    const first = outcome.reports.find((r) => r.seq === 1);
    const cancelled = outcome.reports.find((r): r is CancelledReport => r.type === 'cancelled');
    if (first !== undefined) await setRequestState(trx, partnerId, row.order_id, first.type === 'rejected' ? 'refused' : 'answered');
    if (cancelled !== undefined && cancelClOrdId !== null) await setRequestState(trx, partnerId, cancelClOrdId, 'answered');
    return () => {
      const result = first === undefined ? null : submitResult(first);
      if (result !== null) this.#submits.resolve(row.order_id, result);
      if (cancelled !== undefined) this.#cancels.resolve(row.order_id, { status: 'cancelled', report: cancelled });
    };
  }

  async #cancelRefused(trx: Kysely<Database>, orderId: string, clOrdId: string | null, cxlRejReason: number | null, text: string | null): Promise<(() => void) | undefined> {
    const row = await findOrderAtPartner(trx, this.#deps.partnerId, orderId);
    if (clOrdId !== null) await setRequestState(trx, this.#deps.partnerId, clOrdId, 'refused');
    const reason = cancelRefusal(row === undefined ? undefined : atPartner(row), cxlRejReason);
    this.#deps.log.info({ partner_id: this.#deps.partnerId, order_id: orderId, reason, text }, 'the partner refused a cancel');
    return () => this.#cancels.resolve(orderId, { status: 'refused', reason });
  }

  /** A Reject or BusinessMessageReject of one of the connector's messages: the order or the cancel is refused. */
  async #rejected(trx: Kysely<Database>, message: Extract<PartnerMessage, { kind: 'reject' }>): Promise<(() => void) | undefined> {
    const { partnerId, log } = this.#deps;
    const request =
      (message.refSeqNum === null ? undefined : await findRequestBySeq(trx, partnerId, message.refSeqNum)) ??
      (message.refId === null ? undefined : await findRequest(trx, partnerId, message.refId));
    log.warn({ partner_id: partnerId, level: message.level, ref_seq_num: message.refSeqNum, ref_msg_type: message.refMsgType, text: message.text, cl_ord_id: request?.cl_ord_id }, 'the partner rejected a message');
    if (request === undefined || request.state !== 'pending') return undefined;
    if (request.kind === 'cancel') return this.#cancelRefused(trx, request.order_id, request.cl_ord_id, null, message.text);
    const row = await findOrderAtPartner(trx, partnerId, request.order_id);
    if (row === undefined) return undefined;
    const refusal: ExecReportFields = { execId: '', execType: '8', partnerOrderId: null, lastQty: null, lastPx: null, ordRejReason: null, text: message.text, at: this.#deps.clock.now().getTime() };
    return this.#apply(trx, row, refusal, null);
  }
}
