import type { Kysely } from 'kysely';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../lib/clock.js';
import { isoMillis } from '../lib/clock.js';
import { newId, type ClientId } from '../lib/ids.js';
import { recordEventAtCommit } from '../events/event.service.js';
import { withEventOrigin } from '../events/origin.js';
import { atCommit } from '../storage/at-commit.js';
import { priceFill } from '../post-trade/fill-pricing.js';
import { findOrderForUpdate, findOrdersForUpdate, insertFill, updateOrder } from '../orders/order.repository.js';
import type { Order } from '../orders/order.schemas.js';
import { toOrder } from '../orders/order.mapping.js';
import type { OrderRow } from '../orders/order.table.js';
import type { AfterApply } from '../orders/ports.js';
import type { DialectName } from '../storage/dialect.js';
import type { Database } from '../storage/schema.js';
import { classifyReport, type ExecutionReport } from './connector.js';
import { reportEffect, type OrderEventType } from './report-effect.js';

/** What a fill changes beyond its order (the investor's position), in the transaction that stores it. */
export interface FillEffects {
  fillApplied(
    trx: Kysely<Database>,
    order: OrderRow,
    fill: { fill_qty: number; fill_price_cents: number; executed_at: number },
  ): Promise<void>;
}

/** Where a report stood against its order: applied now, already applied, or ahead of a missing one. */
export type Outcome = 'applied' | 'duplicate' | 'gap' | 'unknown_order';

/**
 * The partners' execution reports applied to their orders, inside a transaction the caller opened
 * (the Router): a report is applied only if its `seq` is the next one for its order, and the order's
 * change, its events, a fill with its fees and, through `fillEffects`, the investor's position are
 * written together.
 */
export class ReportApplier {
  constructor(
    private readonly options: { dialect: DialectName; livemode: boolean },
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
    private readonly fillEffects?: FillEffects,
  ) {}

  /**
   * The orders of `reports` locked in `trx` at once, in the form `applyIn` takes as `rows`: a batch
   * of reports then reads its orders in one statement instead of one each.
   */
  async lockOrders(trx: Kysely<Database>, reports: readonly ExecutionReport[]): Promise<Map<string, OrderRow>> {
    return findOrdersForUpdate(
      trx,
      this.options.dialect,
      reports.map((r) => r.order_id),
    );
  }

  /**
   * Applies `report` in `trx` if it is the next for its order; `after` runs in the same transaction.
   * `rows`: the orders as the caller's earlier reports in `trx` left them, read from there instead of
   * the database and kept up to date; the caller drops an order's entry when its report's work is
   * rolled back.
   */
  async applyIn(trx: Kysely<Database>, report: ExecutionReport, after?: AfterApply, rows?: Map<string, OrderRow>): Promise<Outcome> {
    return withEventOrigin(trx, after?.origin, async () => {
      const row = rows?.get(report.order_id) ?? (await findOrderForUpdate(trx, this.options.dialect, report.order_id));
      if (row === undefined) return 'unknown_order';
      const place = classifyReport(row.last_report_seq, report);
      if (place !== 'next') return place;
      const now = this.clock.now().getTime();
      const effect = reportEffect(row, report, now);
      const next: OrderRow = { ...row, ...effect.changes };
      rows?.set(row.id, next);
      if (!effect.applies) {
        // Recorded as seen so that it is not read again forever, and logged for an operator.
        await updateOrder(trx, row.id, effect.changes);
        this.log.error(
          { order_id: row.id, status: row.status, report, why: effect.why },
          'execution report does not fit the order; ignored',
        );
        return 'applied';
      }
      const { execution } = effect;
      // A report without an execution changes the order and records events only: all of it goes out
      // with the COMMIT (one round trip on PostgreSQL). A fill's order update travels with the reads
      // that price it.
      if (execution === null) void atCommit(trx, () => updateOrder(trx, row.id, effect.changes));
      else {
        const executedAt = Date.parse(execution.executed_at);
        const fill = { fill_qty: execution.fill_qty, fill_price_cents: execution.fill_price_cents, executed_at: executedAt };
        // The fill's gross, fees and net are fixed now, in the transaction that applies it. Sent
        // together, in one round trip on PostgreSQL: the order's update and the pricing's reads
        // (neither reads the other's rows), then the fill and its position's lock and reads.
        const [, priced] = await Promise.all([updateOrder(trx, row.id, effect.changes), priceFill(trx, row, fill)]);
        if (priced.missing.length > 0) {
          this.log.warn(
            { order_id: row.id, partner: row.rcpt_to, instrument: row.instrument, missing: priced.missing },
            'no fee schedule in force on the trade date: that part of the fill is charged nothing',
          );
        }
        await Promise.all([
          insertFill(trx, {
            id: newId('fill', executedAt),
            order_id: row.id,
            seq: report.seq,
            report_id: report.report_id,
            exchange_ref: execution.exchange_ref,
            ...fill,
            ...priced.columns,
          }),
          this.fillEffects?.fillApplied(trx, row, fill),
        ]);
      }
      const order = await this.emit(trx, row, next, effect.events, now, execution ?? undefined);
      await after?.(trx, order);
      return 'applied';
    });
  }

  /** Records the events of a change of the order, with `next` as the order now is; returns it as an Order. */
  async emit(
    trx: Kysely<Database>,
    before: OrderRow,
    next: OrderRow,
    types: readonly OrderEventType[],
    now: number,
    execution?: { fill_qty: number; fill_price_cents: number; exchange_ref: string; executed_at: string },
  ): Promise<Order> {
    const order = toOrder(next);
    const at = new Date(now);
    for (const type of types) {
      const data =
        type === 'order.executed' && execution !== undefined
          ? {
              order_id: order.id,
              rcpt_to: order.rcpt_to,
              instrument: order.instrument,
              side: order.side,
              filled_qty: order.filled_qty,
              average_fill_price_cents: order.average_fill_price_cents,
              executed_at: isoMillis(Date.parse(execution.executed_at)),
              exchange_ref: execution.exchange_ref,
              fill_qty: execution.fill_qty,
              fill_price_cents: execution.fill_price_cents,
              status: order.status,
            }
          : order;
      // Events are the last writes of their change: they go out with the COMMIT (see atCommit).
      recordEventAtCommit(trx, {
        clientId: before.client_id as ClientId,
        type,
        data,
        livemode: this.options.livemode,
        at,
        subjectRef: before.id,
      });
    }
    return order;
  }
}
