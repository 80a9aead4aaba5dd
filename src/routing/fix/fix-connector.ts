import type { Kysely } from 'kysely';
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
import { findOrderAtPartner, findRequest, insertOrderAtPartner, insertRequest, reportsAfter, reportsOfOrder } from './fix.repository.js';
import type { FixOrderRow } from './fix.table.js';
import {
  limitOf,
  newOrderSingle,
  orderCancelReplaceRequest,
  orderCancelRequest,
  requestRefusal,
  type AmendTerms,
  type CancelTerms,
  type FixBody,
} from './mapping.js';
import type { PartnerMessage } from './partner-message.js';
import type { FixSessionRunner, PartnerFixConfig } from './session-runner.js';
import { ReportWriter, type ReportWriterDeps } from './report-writer.js';
import { KeyedMutex, Waiters } from './waiters.js';
import { bodyOf, atPartner, submitResult } from './fix-rows.js';

export interface FixConnectorDeps extends ReportWriterDeps {
  readonly db: Kysely<Database>;
  readonly loadPartner: () => Promise<PartnerFixConfig | null>;
  /**
   * How long submit waits for the partner's answer before reporting it unavailable; cancel and amend
   * wait at most REQUEST_WAIT_MS of it, then answer `pending`.
   */
  readonly answerTimeoutMs: number;
}

/** Below the router's wait for an answer, so that a cancel or an amend the partner is slow on is `pending`, not repeated. */
const REQUEST_WAIT_MS = 1500;

/**
 * The PartnerConnector of an SGI reached over FIX 4.4 (the `fix` connector). Orders go out as
 * NewOrderSingle (ClOrdID = the order id), cancels as OrderCancelRequest and amends as
 * OrderCancelReplaceRequest (ClOrdID = the service's request id) through the partner's durable
 * session; the partner's ExecutionReports, OrderCancelRejects and Rejects become the report log in
 * the database (fix_reports; report-writer.ts), which `reports` reads and which survives restarts.
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
  readonly #reports: ReportWriter;

  constructor(deps: FixConnectorDeps, runner: FixSessionRunner | null) {
    this.name = `fix:${deps.partnerId}`;
    this.#deps = deps;
    this.#runner = runner;
    this.#reports = new ReportWriter(this.name, deps, { submits: this.#submits, cancels: this.#cancels, amends: this.#amends });
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
      return { status: 'refused', reason: requestRefusal(kind, atPartner(row)) };
    const sent = await findRequest(db, partnerId, requestId);
    if (sent === undefined) return null;
    if (sent.state === 'refused') return { status: 'refused', reason: requestRefusal(kind, atPartner(row)) };
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
  applyInbound(trx: Kysely<Database>, message: PartnerMessage): Promise<(() => void) | undefined> {
    return this.#reports.apply(trx, message);
  }
}

/** A cancel or an amend that had no answer within its wait: it is `pending`. */
class PendingAnswer extends Error {}
