import type { FastifyBaseLogger } from 'fastify';
import type { OrderRow } from '../orders/order.table.js';
import type { AfterApply } from '../orders/ports.js';
import { inSavepoint } from '../storage/at-commit.js';
import { type ApplyToOrders, ConnectorUnavailableError } from './connector.js';
import type { ReportApplier } from './report-applier.js';

/** No answer within the router's wait: treated as the partner unavailable. */
class HandOverTimeout extends Error {}

export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new HandOverTimeout(`no answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** The partner was not reached, or did not answer in time: nothing is known to have happened. */
export const isUnreachable = (error: unknown) => error instanceof ConnectorUnavailableError || error instanceof HandOverTimeout;

/** A hand-over waiting for its partner's answer: `after` ran with it (`ran`), in a transaction now committed (`committed`). */
export interface Answering {
  readonly after: AfterApply;
  ran: boolean;
  committed: boolean;
}

/**
 * The partner's answer to a hand-over was applied with `after` in a transaction that may not have
 * committed (the connector reported no answer after all): the request's stored answer decides.
 */
export class AnswerNotConfirmed extends Error {
  constructor(orderId: string, cause: unknown) {
    super(`the answer to order ${orderId} was applied in a transaction not known to have committed`, { cause });
    this.name = 'AnswerNotConfirmed';
  }
}

/**
 * Reports applied to their orders in the transaction in which a connector records them (the FIX
 * connector's inbound transaction), instead of waiting for the routing loop to read the log: a fill
 * reaches its order, its position and its webhooks with the commit that records it, and the answer
 * to an order being handed over in this process is applied with that request's `after` (its final
 * answer, its events' origin), one commit fewer in series for the request.
 */
export class HandOverAnswers {
  /** The hand-overs of this process waiting for their partner's answer, by order id. */
  readonly #waiting = new Map<string, Answering>();

  constructor(
    private readonly reports: ReportApplier,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** A hand-over of order `orderId` starts waiting for its answer; `done` when it stops. */
  waitFor(orderId: string, after: AfterApply): Answering {
    const answering: Answering = { after, ran: false, committed: false };
    this.#waiting.set(orderId, answering);
    return answering;
  }

  done(orderId: string, answering: Answering): void {
    if (this.#waiting.get(orderId) === answering) this.#waiting.delete(orderId);
  }

  /**
   * Applies `reports` in `trx`, each in a savepoint of its own, only when its `seq` is the next of
   * its order (ReportApplier). The report that answers a waiting hand-over (`seq` 1) runs its
   * `after`. A report that fails to apply is rolled back alone, logged, and left to the log's reader.
   */
  readonly applyToOrders: ApplyToOrders = async (trx, reports) => {
    const answered: Answering[] = [];
    // An order's acknowledgement and its fill often come together: the fill reads the order as the
    // acknowledgement left it, not from the database again.
    const rows = new Map<string, OrderRow>();
    for (const report of reports) {
      const answering = report.seq === 1 ? this.#waiting.get(report.order_id) : undefined;
      try {
        const outcome = await inSavepoint(trx, 'cauri_report', () => this.reports.applyIn(trx, report, answering?.after, rows));
        if (answering !== undefined && outcome === 'applied') {
          answering.ran = true;
          answered.push(answering);
        }
      } catch (error) {
        // Its work was undone: the order is read again.
        rows.delete(report.order_id);
        this.log.error(
          { order_id: report.order_id, seq: report.seq, report_id: report.report_id, err: error },
          'execution report not applied with its log entry; the routing loop applies it',
        );
      }
    }
    if (answered.length === 0) return undefined;
    return () => {
      for (const answering of answered) answering.committed = true;
    };
  };
}
