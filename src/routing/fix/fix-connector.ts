import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Clock } from '../../lib/clock.js';
import type { OrderId } from '../../lib/ids.js';
import type { Database } from '../../storage/schema.js';
import {
  ConnectorUnavailableError,
  type AmendRequest,
  type AmendResult,
  type CancelledReport,
  type CancelRequest,
  type CancelResult,
  type OrderForPartner,
  type PartnerConnector,
  type ReplacedReport,
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
import type { FixOrderRow, FixRequestRow } from './fix.table.js';
import {
  applyExecutionReport,
  limitOf,
  newOrderSingle,
  orderCancelReplaceRequest,
  orderCancelRequest,
  rejectedRequest,
  replacedTerms,
  requestRefusal,
  timeInForceOf,
  type AmendTerms,
  type CancelTerms,
  type ExecReportFields,
  type FixBody,
  type ReportContext,
} from './mapping.js';
import type { RefusedReason } from './inbound-check.js';
import type { PartnerMessage } from './partner-message.js';
import type { FixSessionRunner, PartnerFixConfig } from './session-runner.js';
import { KeyedMutex, Waiters } from './waiters.js';
import { bodyOf, cancelTerms, amendTerms, atPartner, submitResult } from './fix-rows.js';

export interface FixConnectorDeps {
  readonly partnerId: string;
  readonly db: Kysely<Database>;
  readonly clock: Clock;
  readonly log: FastifyBaseLogger;
  readonly loadPartner: () => Promise<PartnerFixConfig | null>;
  /**
   * How long submit waits for the partner's answer before reporting it unavailable; cancel and amend
   * wait at most REQUEST_WAIT_MS of it, then answer `pending`.
   */
  readonly answerTimeoutMs: number;
  /** Counts a partner's message that was not applied (here: a report for an order this service did not send). */
  readonly onRefused?: (reason: RefusedReason) => void;
}

/** Below the router's wait for an answer, so that a cancel or an amend the partner is slow on is `pending`, not repeated. */
const REQUEST_WAIT_MS = 1500;

/**
 * The PartnerConnector of an SGI reached over FIX 4.4 (the `fix` connector). Orders go out as
 * NewOrderSingle (ClOrdID = the order id), cancels as OrderCancelRequest and amends as
 * OrderCancelReplaceRequest (ClOrdID = the service's request id) through the partner's durable
 * session; the partner's ExecutionReports, OrderCancelRejects and Rejects become the report log in
 * the database (fix_reports), which `reports` reads and which survives restarts.
 *
 * `submit` resolves when the partner's answer is committed; `cancel` and `amend` too when it comes
 * within REQUEST_WAIT_MS, else they answer `pending` and the answer reaches the log (a refusal of an
 * open order as a `request_refused` report). A message that is recorded is never sent twice: a
 * repeated submit, cancel or amend (after a time-out or a crash) returns the first answer, or waits
 * for it. In a process that does not run the session (`runner` null), they report the partner
 * unavailable and the process that holds the session does the work.
 */
export class FixConnector implements PartnerConnector {
  readonly name: string;
  readonly #deps: FixConnectorDeps;
  readonly #runner: FixSessionRunner | null;
  readonly #submits = new Waiters<SubmitResult>();
  readonly #cancels = new Waiters<CancelResult>();
  readonly #amends = new Waiters<AmendResult>();
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
    if (session === null)
      throw this.#unavailable(this.#runner === null ? 'the FIX session runs in another process' : 'the FIX session is not logged on');
    return session;
  }

  async submit(order: OrderForPartner): Promise<SubmitResult> {
    return this.#mutex.run(order.order_id, async () => {
      const { partnerId, db, clock, answerTimeoutMs } = this.#deps;
      const waiter = this.#submits.wait(order.order_id, answerTimeoutMs, () =>
        this.#unavailable(`no answer to order ${order.order_id} yet`),
      );
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
        // The partner's default account from the settings this connection was opened with (a change
        // applies at the next logon); the order's own account, fixed when it was accepted, comes first.
        const account = this.#runner?.settings?.account ?? (await this.#deps.loadPartner())?.settings.account ?? null;
        const body = newOrderSingle(order, { defaultAccount: account, transactTime: clock.now().getTime() });
        await session
          .sendApplication('D', body, order.order_id, async (trx, seq, at) => {
            await insertOrderAtPartner(trx, {
              partner_id: partnerId,
              order_id: order.order_id,
              side: order.side,
              qty: order.qty,
              instrument: order.instrument,
              body: JSON.stringify(body),
              state: 'sent',
              cum_qty: 0,
              report_seq: 0,
              partner_order_id: null,
              created_at: at,
              updated_at: at,
            });
            await insertRequest(trx, {
              partner_id: partnerId,
              cl_ord_id: order.order_id,
              order_id: order.order_id,
              kind: 'new',
              seq,
              state: 'pending',
              terms: null,
              created_at: at,
            });
          })
          .catch((error: unknown) => {
            throw this.#unavailable('the order could not be recorded for sending', error);
          });
        return await waiter.promise;
      } catch (error) {
        waiter.cancel();
        throw error;
      }
    });
  }

  async cancel(orderId: OrderId, request: CancelRequest): Promise<CancelResult> {
    return this.#mutex.run(`request:${orderId}`, async () => {
      const waiter = this.#cancels.wait(orderId, Math.min(this.#deps.answerTimeoutMs, REQUEST_WAIT_MS), () => new PendingAnswer());
      try {
        const row = await findOrderAtPartner(this.#deps.db, this.#deps.partnerId, orderId);
        const known = await this.#knownAnswer('cancel', row, request.request_id);
        if (known !== null && known !== 'wait') {
          waiter.cancel();
          return known as CancelResult;
        }
        if (known === 'wait') return await waiter.promise;
        const order = row as FixOrderRow;
        const terms: Omit<CancelTerms, 'request_id'> = { reason: request.reason };
        await this.#send(
          'F',
          order,
          'cancel',
          request.request_id,
          terms,
          orderCancelRequest(bodyOf(order), request.request_id, this.#deps.clock.now().getTime()),
        );
        return await waiter.promise;
      } catch (error) {
        waiter.cancel();
        if (error instanceof PendingAnswer) return { status: 'pending' };
        throw error;
      }
    });
  }

  async amend(orderId: OrderId, request: AmendRequest): Promise<AmendResult> {
    return this.#mutex.run(`request:${orderId}`, async () => {
      const waiter = this.#amends.wait(
        request.request_id,
        Math.min(this.#deps.answerTimeoutMs, REQUEST_WAIT_MS),
        () => new PendingAnswer(),
      );
      try {
        const row = await findOrderAtPartner(this.#deps.db, this.#deps.partnerId, orderId);
        const known = await this.#knownAnswer('amend', row, request.request_id);
        if (known !== null && known !== 'wait') {
          waiter.cancel();
          return known as AmendResult;
        }
        if (known === 'wait') return await waiter.promise;
        const order = row as FixOrderRow;
        const current = bodyOf(order);
        const terms: AmendTerms = {
          request_id: request.request_id,
          qty: request.qty ?? order.qty,
          limit_price_cents: request.limit_price_cents ?? limitOf(current),
        };
        const { request_id: _, ...stored } = terms;
        await this.#send(
          'G',
          order,
          'amend',
          request.request_id,
          stored,
          orderCancelReplaceRequest(current, request.request_id, terms, this.#deps.clock.now().getTime()),
        );
        return await waiter.promise;
      } catch (error) {
        waiter.cancel();
        if (error instanceof PendingAnswer) return { status: 'pending' };
        throw error;
      }
    });
  }

  /** Records a cancel or an amend and sends it (once: the caller checked that it is new). */
  async #send(
    msgType: 'F' | 'G',
    order: FixOrderRow,
    kind: 'cancel' | 'amend',
    clOrdId: string,
    terms: object,
    body: FixBody,
  ): Promise<void> {
    const session = this.#session();
    const { partnerId } = this.#deps;
    await session
      .sendApplication(msgType, body, clOrdId, (trx, seq, at) =>
        insertRequest(trx, {
          partner_id: partnerId,
          cl_ord_id: clOrdId,
          order_id: order.order_id,
          kind,
          seq,
          state: 'pending',
          terms: JSON.stringify(terms),
          created_at: at,
        }),
      )
      .catch((error: unknown) => {
        throw this.#unavailable(`the ${kind} could not be recorded for sending`, error);
      });
  }

  /**
   * The answer to a cancel or an amend when the partner need not be asked (again): it never had the
   * order, the order is final, or this request was sent before (`pending` while it waits, else what
   * the partner answered). `wait`: sent before, not answered yet. Null: send it.
   */
  async #knownAnswer(
    kind: 'cancel' | 'amend',
    row: FixOrderRow | undefined,
    requestId: string,
  ): Promise<CancelResult | AmendResult | 'wait' | null> {
    const { db, partnerId } = this.#deps;
    if (row === undefined) return { status: 'refused', reason: 'unknown_order' };
    const reports = row.report_seq === 0 ? [] : await reportsOfOrder(db, partnerId, row.order_id);
    if (kind === 'cancel' && row.state === 'cancelled') {
      const report = reports.find((r): r is CancelledReport => r.type === 'cancelled');
      if (report !== undefined) return { status: 'cancelled', report };
    }
    const replaced = reports.find((r): r is ReplacedReport => r.type === 'replaced' && r.request_id === requestId);
    if (kind === 'amend' && replaced !== undefined) return { status: 'replaced', report: replaced };
    if (row.state === 'filled' || row.state === 'rejected' || row.state === 'cancelled')
      return { status: 'refused', reason: requestRefusal(kind, atPartner(row), null) };
    const sent = await findRequest(db, partnerId, requestId);
    if (sent === undefined) return null;
    if (sent.state === 'refused') return { status: 'refused', reason: requestRefusal(kind, atPartner(row), null) };
    return sent.state === 'pending' ? 'wait' : { status: 'pending' };
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

  /** The order an ExecutionReport concerns, and the request its ClOrdID names. */
  async #orderOf(
    trx: Kysely<Database>,
    clOrdId: string | null,
    origClOrdId: string | null,
  ): Promise<{ orderId: string; request: FixRequestRow } | null> {
    for (const id of [clOrdId, origClOrdId]) {
      if (id === null) continue;
      const request = await findRequest(trx, this.#deps.partnerId, id);
      if (request !== undefined) return { orderId: request.order_id, request };
    }
    return null;
  }

  /**
   * The cancel and the amend an ExecutionReport may answer: the one its ClOrdID names, else the
   * latest still waiting (gateways differ in which ClOrdID they echo).
   */
  async #context(trx: Kysely<Database>, row: FixOrderRow, named: FixRequestRow | null): Promise<ReportContext> {
    const waiting = (await requestsOfOrder(trx, this.#deps.partnerId, row.order_id)).filter((r) => r.state === 'pending');
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
    const row = found === null ? undefined : await findOrderAtPartner(trx, partnerId, found.orderId);
    if (found === null || row === undefined) {
      log.warn(
        { partner_id: partnerId, cl_ord_id: clOrdId, orig_cl_ord_id: origClOrdId, exec_id: er.execId, exec_type: er.execType },
        'ExecutionReport for an order this service did not send; ignored',
      );
      return () => this.#deps.onRefused?.('unknown_order');
    }
    const now = clock.now().getTime();
    if (er.execId !== '' && !(await claimExecId(trx, partnerId, row.order_id, er.execId, now))) {
      log.info(
        { partner_id: partnerId, order_id: row.order_id, exec_id: er.execId },
        'ExecutionReport already applied (same ExecID); ignored',
      );
      return undefined;
    }
    return this.#apply(trx, row, er, found.request);
  }

  async #apply(
    trx: Kysely<Database>,
    row: FixOrderRow,
    er: ExecReportFields,
    named: FixRequestRow | null,
  ): Promise<(() => void) | undefined> {
    const { partnerId, log, clock } = this.#deps;
    const context = await this.#context(trx, row, named);
    const outcome = applyExecutionReport(atPartner(row), er, this.name, context);
    if ('ignored' in outcome) {
      log.info(
        { partner_id: partnerId, order_id: row.order_id, exec_type: er.execType, exec_id: er.execId, why: outcome.ignored },
        'ExecutionReport adds no report',
      );
      return undefined;
    }
    await appendReports(trx, partnerId, outcome.reports);
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
    const refusedByEnd = ended
      ? (await requestsOfOrder(trx, partnerId, row.order_id)).filter((r) => r.kind !== 'new' && r.state === 'pending')
      : [];
    for (const request of refusedByEnd) await setRequestState(trx, partnerId, request.cl_ord_id, 'refused');
    return () => {
      const result = first === undefined ? null : submitResult(first);
      if (result !== null) this.#submits.resolve(row.order_id, result);
      if (cancelled !== undefined) this.#cancels.resolve(row.order_id, { status: 'cancelled', report: cancelled });
      else if (ended) this.#cancels.resolve(row.order_id, { status: 'refused', reason: requestRefusal('cancel', outcome.order, null) });
      if (replaced !== undefined) this.#amends.resolve(replaced.request_id, { status: 'replaced', report: replaced });
      for (const request of refusedByEnd)
        if (request.kind === 'amend')
          this.#amends.resolve(request.cl_ord_id, { status: 'refused', reason: requestRefusal('amend', outcome.order, null) });
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
    const reason = requestRefusal(kind, row === undefined ? undefined : atPartner(row), cxlRejReason);
    log.info(
      { partner_id: partnerId, order_id: request.order_id, request_id: request.cl_ord_id, request: kind, reason, text },
      'the partner refused a request',
    );
    let result: CancelResult | AmendResult = { status: 'refused', reason };
    if (row !== undefined && row.state === 'accepted') {
      const seq = row.report_seq + 1;
      const occurredAt = new Date(clock.now().getTime()).toISOString();
      await appendReports(trx, partnerId, [
        {
          report_id: `${this.name}:${row.order_id}:${seq}`,
          order_id: row.order_id as OrderId,
          seq,
          occurred_at: occurredAt,
          type: 'request_refused',
          request_id: request.cl_ord_id,
          request: kind,
          reason,
        },
      ]);
      await updateOrderAtPartner(trx, partnerId, row.order_id, { report_seq: seq, updated_at: clock.now().getTime() });
      result = { status: 'pending' };
    }
    return () => {
      if (kind === 'cancel') this.#cancels.resolve(request.order_id, result as CancelResult);
      else this.#amends.resolve(request.cl_ord_id, result as AmendResult);
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
    return this.#apply(trx, row, refusal, request);
  }
}

/** A cancel or an amend that had no answer within its wait: it is `pending`. */
class PendingAnswer extends Error {}
